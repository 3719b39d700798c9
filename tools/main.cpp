#include "tools/commands.h"

int main(int argc, char** argv) { return ts::run_cli(argc, argv); }
