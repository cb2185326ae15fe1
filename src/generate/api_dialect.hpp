#pragma once
// The two LLM API dialects kbv generate speaks, behind one small interface: build the HTTP
// request for a single-turn prompt, and read the completion and token usage out of a reply.
// openai_api.cpp: Chat Completions; anthropic_api.cpp: Messages.
#include <optional>
#include <string>

#include "generate/http_client.hpp"

namespace kbv::gen {

struct Completion {
  std::string model;
  std::string prompt;
  double temperature = 0.0;
  int max_tokens = 8192;
};

struct ParsedReply {
  bool ok = false;
  std::string text;         // the assistant's text (all text parts joined)
  std::string error;        // why the body could not be read when !ok
  std::string stop_reason;  // finish_reason / stop_reason as the API says it
  std::optional<long> prompt_tokens, completion_tokens;
};

struct ApiDialect {
  std::string name;              // "openai" | "anthropic"
  std::string default_endpoint;  // base URL, without the trailing path
  std::string key_env;           // environment variable holding the key
  // The request for one prompt; `key` goes into headers only.
  HttpRequest (*build)(const std::string& endpoint, const std::string& key, const Completion& c);
  // Reads a 2xx body; never throws (malformed JSON becomes !ok with the reason).
  ParsedReply (*parse)(const std::string& body);
};

const ApiDialect& openai_dialect();
const ApiDialect& anthropic_dialect();
// Throws UsageError for an unknown name.
const ApiDialect& dialect_by_name(const std::string& name);

}  // namespace kbv::gen
