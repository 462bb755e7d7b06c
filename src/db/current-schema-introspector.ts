import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type DialectAdapter,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely'
import { TransactionLockPostgresAdapter } from './postgres-migration-lock.ts'

interface ColumnRow {
  table: string
  table_type: string
  column: string
  type: string
  not_null: boolean
  has_default: boolean
  auto_incrementing: boolean
}

/**
 * Kysely's PostgreSQL introspector reads the tables of every schema of the database and calls
 * `has_schema_privilege(name, …)` on each schema by name: a schema another session drops while the
 * query runs makes it fail ("schema … does not exist"), and the migrator's check for its own
 * bookkeeping table with it. The service only ever works in one schema (the connection's
 * search_path), so this one looks there alone, through information_schema, which checks
 * privileges by oid.
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  // biome-ignore lint/suspicious/noExplicitAny: the DatabaseIntrospector contract takes any database type.
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.db)
    return rows.map((r) => ({ name: r.name }))
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow & { schema: string }>`
      select t.table_schema as schema, t.table_name as table, t.table_type,
             c.column_name as column, c.udt_name as type,
             c.is_nullable = 'NO' as not_null, c.column_default is not null as has_default,
             coalesce(c.column_default like 'nextval(%' or c.is_identity = 'YES', false) as auto_incrementing
        from information_schema.tables t
        join information_schema.columns c
          on c.table_schema = t.table_schema and c.table_name = t.table_name
       where t.table_schema = current_schema()
       order by t.table_name, c.ordinal_position`.execute(this.db)
    const tables = new Map<string, TableMetadata>()
    for (const row of rows) {
      if (!options.withInternalKyselyTables && row.table.startsWith('kysely_migration')) continue
      let table = tables.get(row.table)
      if (table === undefined) {
        table = { name: row.table, schema: row.schema, isView: row.table_type === 'VIEW', columns: [] }
        tables.set(row.table, table)
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing,
      })
    }
    return [...tables.values()]
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) }
  }
}

/**
 * Kysely's PostgreSQL dialect, introspecting the current schema only (see above), with a
 * migration lock that holds through a transaction pooler (src/db/postgres-migration-lock.ts).
 */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionLockPostgresAdapter()
  }

  // biome-ignore lint/suspicious/noExplicitAny: overrides Kysely's signature.
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db)
  }
}
