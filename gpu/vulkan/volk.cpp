// The one translation unit that holds volk's function pointers and loader code.
#define VOLK_IMPLEMENTATION
#include <volk.h>
