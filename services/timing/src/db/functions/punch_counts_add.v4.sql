-- punch_counts_add, version 4: applied by migration 0011_counter_maintenance. Frozen once merged (docs/database.md "Function texts").
create or replace function punch_counts_add() returns trigger language plpgsql as $fn$
      begin
        insert into timing.punch_counts (modem, shift, bucket, n, txid)
        select modem, 19::int2, id >> 19, count(*), txid from new_rows group by modem, id >> 19, txid
        union all
        select modem, 16::int2, id >> 16, count(*), txid from new_rows group by modem, id >> 16, txid
        union all
        select modem, 13::int2, id >> 13, count(*), txid from new_rows group by modem, id >> 13, txid
        union all
        select modem, 10::int2, id >> 10, count(*), txid from new_rows group by modem, id >> 10, txid;
        return null;
      end
      $fn$;
