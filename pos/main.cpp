// orderpos: the reference POS. Everything lives in pos_lib.
#include "common/config/options.hpp"
#include "pos/app/commands.hpp"

int main(int argc, char** argv) { return pos::app::main(argc, argv, common::config::process_env()); }
