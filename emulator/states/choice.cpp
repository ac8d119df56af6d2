// Amazon States Language: see definition.hpp and data.hpp.
#include "emulator/states/data.hpp"
