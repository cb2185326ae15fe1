// Writes the synthetic suite (tests/support/report_fixtures.hpp) into a results DB, for the
// report's CLI and screenshot checks: make_report_db FILE
#include <filesystem>
#include <iostream>

#include "../support/report_fixtures.hpp"
#include "store/result_store.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kbv_make_report_db FILE\n";
    return 2;
  }
  std::filesystem::remove(argv[1]);
  kbv::ResultStore store(argv[1]);
  kbv::RunRecord run;
  run.argv = {"kbv_make_report_db", argv[1]};
  run.kbv_version = "test";
  run.options = {{"synthetic", true}};
  auto id = store.begin_run(run);
  for (const auto& r : kbv::testing::synthetic_suite()) store.put_verdict(r.sample, r.verdict, id);
  store.finish_run(id);
  std::cout << "wrote " << store.verdict_count() << " verdicts to " << argv[1] << "\n";
  return 0;
}
