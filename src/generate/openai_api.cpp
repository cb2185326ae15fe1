// OpenAI-compatible Chat Completions: POST {endpoint}/chat/completions, Authorization: Bearer.
// Also what vLLM, SGLang, Together, OpenRouter... serve.
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "generate/api_dialect.hpp"

namespace kbv::gen {
namespace {

HttpRequest openai_build(const std::string& endpoint, const std::string& key, const Completion& c) {
  nlohmann::json body = {
      {"model", c.model},
      {"messages", nlohmann::json::array({{{"role", "user"}, {"content", c.prompt}}})},
      {"temperature", c.temperature},
      {"max_tokens", c.max_tokens},
  };
  HttpRequest r;
  r.url = endpoint + "/chat/completions";
  r.headers = {"Authorization: Bearer " + key};
  r.body = body.dump();
  return r;
}

ParsedReply openai_parse(const std::string& text) {
  ParsedReply reply;
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    reply.error = "response is not a JSON object";
    return reply;
  }
  auto choices = json.find("choices");
  if (choices == json.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object()) {
    reply.error = "response has no choices[0]";
    return reply;
  }
  const auto& choice = (*choices)[0];
  auto message = choice.find("message");
  if (message == choice.end() || !message->is_object() || !message->contains("content") ||
      !(*message)["content"].is_string()) {
    reply.error = "choices[0].message.content is missing or not a string";
    return reply;
  }
  reply.text = (*message)["content"].get<std::string>();
  if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string())
    reply.stop_reason = f->get<std::string>();
  if (auto u = json.find("usage"); u != json.end() && u->is_object()) {
    if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer())
      reply.prompt_tokens = p->get<long>();
    if (auto p = u->find("completion_tokens"); p != u->end() && p->is_number_integer())
      reply.completion_tokens = p->get<long>();
  }
  reply.ok = true;
  return reply;
}

}  // namespace

const ApiDialect& openai_dialect() {
  static const ApiDialect d{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", openai_build,
                            openai_parse};
  return d;
}

const ApiDialect& dialect_by_name(const std::string& name) {
  if (name == "openai") return openai_dialect();
  if (name == "anthropic") return anthropic_dialect();
  throw UsageError("unknown --provider '" + name + "'; use openai or anthropic");
}

}  // namespace kbv::gen
