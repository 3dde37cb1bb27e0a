"""Code that destroys rows or tables through an ORM or a driver's bulk calls, in any language:
`Order.objects.all().delete()`, `User.delete_all`, `Model::truncate()`,
`prisma.user.deleteMany({})`, `db.drop_all()`, `collection.drop()`.

The analysers follow values and calls; an ORM's model classes are built at run time, so
its destructive methods are recognised by name, the way a person reading the code would.
A destroy effect on a database follows; the effect rules decide what it costs (production
is denied, elsewhere it asks, a test database is everyday work). Linear-time RE2 over the
code text: this is untrusted input.
"""

from __future__ import annotations

import re2

from sidecar.effects.model import Action, Effect

# Bulk deletes and drops, named by the ORMs and drivers that have them. Group 1 is shown.
_DESTROYS = re2.compile(
    r"("
    # Django: Model.objects.all().delete(), .filter(...).delete(); Model.objects.delete()
    r"\.objects(?:\.[a-z_]+\([^()]*\))*\.delete\(\s*\)"
    # Rails: Model.delete_all / destroy_all (also on .where(...), .all, .in_batches)
    r"|\b(?:delete_all|destroy_all|delete_by|destroy_by)\b"
    r"|\.connection\.(?:drop_table|drop_database|truncate|truncate_tables|purge)\b"
    # SQLAlchemy and Flask-SQLAlchemy: metadata.drop_all(engine), db.drop_all(), query.delete()
    r"|\bdrop_all\s*\("
    r"|\.query\([^()]*\)(?:\.[a-z_]+\([^()]*\))*\.delete\(\s*(?:synchronize_session\s*=[^()]*)?\)"
    # Laravel: Model::truncate(), DB::table('x')->delete() / ->truncate(), Schema::drop*
    r"|::truncate\(\s*\)"
    r"|\bDB::table\([^()]*\)(?:->[a-zA-Z_]+\([^()]*\))*->(?:truncate|delete)\(\s*\)"
    r"|::(?:query|where|whereNotNull|whereNull)\([^()]*\)(?:->[a-zA-Z_]+\([^()]*\))*->delete\(\s*\)"
    r"|\bSchema::(?:drop|dropIfExists|dropAllTables)\s*\("
    r"|\bDB::(?:statement|unprepared)\(\s*['\"]\s*(?i:drop|truncate)\b"
    # Prisma, Mongoose, MongoDB drivers, Sequelize, TypeORM, Knex
    r"|\.deleteMany\(\s*(?:\{\s*\})?\s*\)"
    r"|\.(?:dropDatabase|dropCollection)\(\s*[^()]*\)"
    r"|\.drop\(\s*\)"
    r"|\bsequelize\.drop\("
    r"|\.sync\(\s*\{\s*force\s*:\s*true"
    r"|\.dropSchema\(\s*\)"
    # A driver handed a statement that destroys data: DROP, TRUNCATE, DELETE without WHERE.
    r"|\.(?:execute|executescript|executemany|exec|query|run|raw|sql)\(\s*(?:text\(\s*)?"
    r"[rbfRBF]?[\"'`]{1,3}\s*(?i:drop\s+(?:table|database|schema|collection)\b|truncate\b"
    r"|delete\s+from\s+[a-z0-9_.\"`]+\s*(?:;|[\"'`]))"
    # Prisma's raw statements, called or tagged: prisma.$executeRawUnsafe('DROP ...'),
    # prisma.$executeRaw`TRUNCATE ...`
    r"|\.\$(?:execute|query)Raw(?:Unsafe)?\s*\(?\s*[\"'`]\s*(?i:drop\s+(?:table|database|schema)\b"
    r"|truncate\b|delete\s+from\s+[a-z0-9_.\"`]+\s*(?:;|[\"'`]))"
    r")"
)
_MAX_FOUND = 8


def data_destruction(code: str) -> list[Effect]:
    """Destroy effects on a database for the bulk deletes and drops in `code`."""
    found: list[Effect] = []
    seen: set[str] = set()
    code = code.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # RE2 reads UTF-8
    for match in _DESTROYS.finditer(code):
        call = match.group(1).strip()[:80]
        if call in seen:
            continue
        seen.add(call)
        found.append(
            Effect(
                Action.DESTROY,
                f"database rows ({call})",
                flags=frozenset({"database", "in_code"}),
                program="orm",
            )
        )
        if len(found) >= _MAX_FOUND:
            break
    return found
