\timing on
CREATE TEMP TABLE src_d AS SELECT * FROM monitor_dailyinfluence WHERE workspace_id = (SELECT id FROM monitor_workspace WHERE slug='bench-1m');
CREATE TABLE fl_u (LIKE monitor_dailyinfluence); ALTER TABLE fl_u DROP COLUMN id; CREATE UNIQUE INDEX ON fl_u (workspace_id, publisher_id, day, label, account_id);
\echo unique only, heap order
INSERT INTO fl_u (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d;
TRUNCATE fl_u;
\echo unique only, sorted
INSERT INTO fl_u (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d ORDER BY workspace_id, publisher_id, day, label, account_id;
CREATE TABLE fl_w (LIKE monitor_dailyinfluence); ALTER TABLE fl_w DROP COLUMN id; CREATE INDEX ON fl_w (workspace_id, day);
\echo ws,day only heap order
INSERT INTO fl_w (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d;
CREATE TABLE fl_a (LIKE monitor_dailyinfluence); ALTER TABLE fl_a DROP COLUMN id; CREATE INDEX ON fl_a (workspace_id, account_id, day);
\echo ws,account,day only heap order
INSERT INTO fl_a (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d;
TRUNCATE fl_a;
\echo ws,account,day only sorted by unique
INSERT INTO fl_a (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d ORDER BY workspace_id, publisher_id, day, label, account_id;
TRUNCATE fl_a;
\echo ws,account,day only sorted by it
INSERT INTO fl_a (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d ORDER BY workspace_id, account_id, day;
\echo all 4 sorted by unique
CREATE TABLE fl_d4 (LIKE monitor_dailyinfluence INCLUDING ALL);
INSERT INTO fl_d4 (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d ORDER BY workspace_id, publisher_id, day, label, account_id;
SELECT count(distinct day) days, count(distinct account_id) accts, count(distinct publisher_id) pubs FROM src_d;
DROP TABLE fl_u, fl_w, fl_a, fl_d4;
