// orderhub: webhook listener, order store, forwarder and operator CLI. Everything lives in hub_lib.
#include "common/config/options.hpp"
#include "hub/app/commands.hpp"

int main(int argc, char** argv) { return hub::app::main(argc, argv, common::config::process_env()); }
