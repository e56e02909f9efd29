-- punch_counts_remove, version 1: applied by migration 0002_punch_counts. Frozen once merged (docs/database.md "Function texts").
create or replace function punch_counts_remove() returns trigger language plpgsql as $fn$
      begin
        insert into punch_counts (modem, shift, bucket, n, txid)
        select modem, 16::int2, id >> 16, -count(*), txid from old_rows group by modem, id >> 16, txid
        union all
        select modem, 10::int2, id >> 10, -count(*), txid from old_rows group by modem, id >> 10, txid;
        return null;
      end
      $fn$;
