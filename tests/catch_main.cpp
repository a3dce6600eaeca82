// The one Catch2 main shared by unit_tests and pg_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
