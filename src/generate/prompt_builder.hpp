#pragma once
// Single-turn prompts from the templates in prompts/ (docs/generate.md): `{{name}}`
// placeholders filled from a map, and the input-blind filter that hides how a problem's
// inputs are made.
#include <map>
#include <string>

namespace kbv::gen {

// Replaces every {{name}} in `tmpl` with values.at(name). Throws UsageError naming the
// template for a placeholder without a value (a typo in a template must not reach a model).
std::string render_template(const std::string& tmpl,
                            const std::map<std::string, std::string>& values,
                            const std::string& template_name = "template");

// The problem source without get_inputs() / get_init_inputs(), KBV_SMALL and the top-level
// `NAME = <literal>` shape constants; imports, classes and everything else are kept. Line-based:
// top-level statements are found by indentation, with brackets and triple-quoted strings
// tracked so a multi-line literal or docstring is taken whole.
std::string strip_problem_inputs(const std::string& source);

struct PromptSettings {
  std::string prompts_dir;  // holds single_turn.txt, example_problem.py, example_model_new.py...
  std::string precision = "fp32";  // bf16 adds precision_bf16.txt
  bool input_blind = false;        // filter the sources and add input_blind.txt
};

// The full prompt for one problem source.
std::string build_prompt(const PromptSettings& settings, const std::string& problem_source);

// Reads a whole file; throws UsageError naming it when it cannot.
std::string read_text_file(const std::string& path);

}  // namespace kbv::gen
