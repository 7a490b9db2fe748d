import { sql, type Kysely } from 'kysely';

/**
 * Each `requests` row counts its writes (`version`, raised by one by every update, whoever writes it): a status
 * change built from a row read at version v finds its moved row at v + 1 exactly when no other writer came between,
 * and only then writes the event it built in its own statement (`updateRequestStatus`). A trigger, so that no writer
 * can forget it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table requests add column version bigint not null default 0`.execute(db);
  await sql`create function requests_count_write() returns trigger language plpgsql as $$
    begin
      new.version := old.version + 1;
      return new;
    end
  $$`.execute(db);
  await sql`create trigger requests_count_write before update on requests
    for each row execute function requests_count_write()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger requests_count_write on requests`.execute(db);
  await sql`drop function requests_count_write()`.execute(db);
  await sql`alter table requests drop column version`.execute(db);
}
