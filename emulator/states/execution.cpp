// The interpreter: see execution.hpp.
#include "emulator/states/execution.hpp"
