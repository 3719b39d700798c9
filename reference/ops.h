#pragma once
// What an operator's contract (reference/<op>.cpp) needs: the definitions, and its generator (properties/).
#include "core/op.h"
#include "properties/generators.h"
