#include "stc_test.h"
