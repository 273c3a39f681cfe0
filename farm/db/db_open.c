/* db_open.c: the store's factory. It picks the back end from where the store is (a
 * postgresql:// or postgres:// URI: PostgreSQL, db_pg.c; anything else: an SQLite file,
 * db_sqlite.c), lets it connect, then starts what every store shares (db.c). It is the
 * one file that knows both back ends, so db.c and the back ends never call each other
 * in a circle (db_backend_internal.h). */
#include "db/db_backend_internal.h"

#include <string.h>

/* Whether WHERE names a PostgreSQL store rather than an SQLite file. */
static int is_postgres(const char *where) {
    return !strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11);
}

Db *db_open(const char *where, Err *e) {
    Db *db = is_postgres(where) ? db_pg_open(where, e) : db_sqlite_open(where, e);
    if (db) db_init_common(db);
    return db;
}
