// libpsl (Debian's libpsl-dev): the Public Suffix List, for the cookie jar's
// Domain rules. Only Sources/AsyncURLSession/Storage/Cookies imports it.
#include <libpsl.h>
