// guarded(): the one place where an exception inside a phase becomes an outcome.
#pragma once
#include <c10/util/Exception.h>
#include <pybind11/pybind11.h>

namespace kbv::judge {

template <typename F>
auto guarded(Outcome outcome, const std::string& what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (Ending&) {
    throw;
  } catch (RunnerError&) {
    throw;
  } catch (pybind11::error_already_set& e) {
    auto text = torch_host::describe_python_error(e);
    throw Ending{outcome, what + ": " + first_line(text.one_line())};
  } catch (const c10::Error& e) {
    throw Ending{outcome, what + ": " + first_line(e.what_without_backtrace())};
  } catch (const std::exception& e) {
    throw Ending{outcome, what + ": " + first_line(e.what())};
  }
}

}  // namespace kbv::judge
