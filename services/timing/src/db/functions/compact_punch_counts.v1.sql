-- compact_punch_counts, version 1: applied by migration 0002_punch_counts. Frozen once merged (docs/database.md "Function texts").
create or replace function compact_punch_counts(out merged integer) language sql as $fn$
        with xm as (select pg_snapshot_xmin(pg_current_snapshot()) as x),
        dirty as (
          select distinct c.modem, c.shift, c.bucket from punch_counts c, xm
          where c.txid <> '0'::xid8 and c.txid < xm.x
        ),
        gone as (
          delete from punch_counts c using dirty d, xm
          where c.modem = d.modem and c.shift = d.shift and c.bucket = d.bucket and c.txid < xm.x
          returning c.modem, c.shift, c.bucket, c.n
        ),
        ins as (
          insert into punch_counts (modem, shift, bucket, n, txid)
          select modem, shift, bucket, sum(n), '0'::xid8 from gone group by modem, shift, bucket having sum(n) <> 0
          returning 1
        )
        select (select count(*)::int from gone) - (select count(*)::int from ins);
      $fn$;
