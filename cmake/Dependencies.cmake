# Finds every dependency and names the Debian 12 package when one is missing.
find_package(Threads REQUIRED)

find_package(Boost 1.81 QUIET COMPONENTS json url)
if(NOT Boost_FOUND OR NOT TARGET Boost::json)
  message(FATAL_ERROR "Boost 1.81 with Boost.JSON and Boost.URL not found: "
                      "apt-get install libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev "
                      "(or run ./deploy/install-deps.sh)")
endif()

find_package(OpenSSL 3 QUIET)
if(NOT OpenSSL_FOUND)
  message(FATAL_ERROR "OpenSSL 3 not found: apt-get install libssl-dev (or run ./deploy/install-deps.sh)")
endif()

find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config (or run ./deploy/install-deps.sh)")
endif()
pkg_check_modules(PQXX QUIET IMPORTED_TARGET libpqxx>=6.4)
if(NOT PQXX_FOUND)
  message(FATAL_ERROR "libpqxx 6.4 not found: apt-get install libpqxx-dev (or run ./deploy/install-deps.sh)")
endif()
# libpq itself (libpq-dev, which libpqxx-dev depends on): its pipeline mode, which libpqxx 6.4 does not offer.
pkg_check_modules(PQ QUIET IMPORTED_TARGET libpq>=14)
if(NOT PQ_FOUND)
  message(FATAL_ERROR "libpq 14 or later not found: apt-get install libpq-dev (or run ./deploy/install-deps.sh)")
endif()

# liburing: the answers of a burst sent, and its requests read, with one system call each (common/http/burst_ring.hpp);
# when the host refuses io_uring at run time the server sends each answer and reads each request on its own.
pkg_check_modules(URING QUIET IMPORTED_TARGET liburing>=2.2)
if(NOT URING_FOUND)
  message(FATAL_ERROR "liburing 2.2 or later not found: apt-get install liburing-dev (or run ./deploy/install-deps.sh)")
endif()

# tcmalloc (gperftools), the allocator of the two binaries (ORDERHUB_TCMALLOC).
if(ORDERHUB_TCMALLOC)
  pkg_check_modules(TCMALLOC QUIET IMPORTED_TARGET libtcmalloc_minimal)
  if(NOT TCMALLOC_FOUND)
    message(FATAL_ERROR "tcmalloc not found: apt-get install libgoogle-perftools-dev (or run ./deploy/install-deps.sh; "
                        "-DORDERHUB_TCMALLOC=OFF builds with glibc's malloc)")
  endif()
endif()

# The build bundles schemas/openapi.yaml into the hub (cmake/bundle_openapi.py) with Debian's python3 and PyYAML.
find_program(ORDERHUB_PYTHON3 NAMES python3 HINTS /usr/bin)
if(ORDERHUB_PYTHON3)
  execute_process(COMMAND ${ORDERHUB_PYTHON3} -c "import yaml" RESULT_VARIABLE ORDERHUB_PYYAML OUTPUT_QUIET ERROR_QUIET)
endif()
if(NOT ORDERHUB_PYTHON3 OR NOT ORDERHUB_PYYAML EQUAL 0)
  message(FATAL_ERROR "python3 with PyYAML not found: apt-get install python3 python3-yaml (or run ./deploy/install-deps.sh)")
endif()

if(ORDERHUB_TESTS)
  find_package(Catch2 2.13 QUIET)
  if(NOT Catch2_FOUND)
    message(FATAL_ERROR "Catch2 2.13 not found: apt-get install catch2 (or run ./deploy/install-deps.sh)")
  endif()
endif()
