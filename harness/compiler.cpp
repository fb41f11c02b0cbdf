#include "harness/compiler.hpp"
