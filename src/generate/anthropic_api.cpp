// Anthropic Messages: POST {endpoint}/messages, x-api-key + anthropic-version headers.
#include <nlohmann/json.hpp>

#include "generate/api_dialect.hpp"

namespace kbv::gen {
namespace {

HttpRequest anthropic_build(const std::string& endpoint, const std::string& key,
                            const Completion& c) {
  nlohmann::json body = {
      {"model", c.model},
      {"max_tokens", c.max_tokens},
      {"temperature", c.temperature},
      {"messages", nlohmann::json::array({{{"role", "user"}, {"content", c.prompt}}})},
  };
  HttpRequest r;
  r.url = endpoint + "/messages";
  r.headers = {"x-api-key: " + key, "anthropic-version: 2023-06-01"};
  r.body = body.dump();
  return r;
}

ParsedReply anthropic_parse(const std::string& text) {
  ParsedReply reply;
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    reply.error = "response is not a JSON object";
    return reply;
  }
  auto content = json.find("content");
  if (content == json.end() || !content->is_array()) {
    reply.error = "response has no content array";
    return reply;
  }
  bool any_text = false;
  for (const auto& part : *content) {
    if (!part.is_object()) continue;
    auto type = part.find("type");
    if (type == part.end() || *type != "text") continue;  // thinking, tool_use
    auto t = part.find("text");
    if (t == part.end() || !t->is_string()) continue;
    reply.text += t->get<std::string>();
    any_text = true;
  }
  if (!any_text) {
    reply.error = "content has no text part";
    return reply;
  }
  if (auto s = json.find("stop_reason"); s != json.end() && s->is_string())
    reply.stop_reason = s->get<std::string>();
  if (auto u = json.find("usage"); u != json.end() && u->is_object()) {
    if (auto p = u->find("input_tokens"); p != u->end() && p->is_number_integer())
      reply.prompt_tokens = p->get<long>();
    if (auto p = u->find("output_tokens"); p != u->end() && p->is_number_integer())
      reply.completion_tokens = p->get<long>();
  }
  reply.ok = true;
  return reply;
}

}  // namespace

const ApiDialect& anthropic_dialect() {
  static const ApiDialect d{"anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY",
                            anthropic_build, anthropic_parse};
  return d;
}

}  // namespace kbv::gen
