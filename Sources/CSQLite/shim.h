// SQLite (Debian's libsqlite3-dev): the response cache's disk store. Only
// Sources/AsyncURLSession/Storage/Cache imports it.
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift
// cannot import: binding with it makes SQLite copy the bytes at once.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
