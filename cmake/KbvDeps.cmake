# Light dependencies shared by the torch-free targets (Debian packages; see scripts/setup.sh).
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  # Debian's libcli11-dev ships the header only on some releases.
  find_path(KBV_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${KBV_CLI11_INCLUDE})
endif()
find_package(fmt REQUIRED)
find_package(Threads REQUIRED)
