// The Step Functions service: see service.hpp.
#include "emulator/states/service.hpp"
