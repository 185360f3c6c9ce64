// Only a header: see include/CFuzzerDriver.h.
#include "CFuzzerDriver.h"
