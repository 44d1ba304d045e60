\timing on
CREATE TEMP TABLE src_a AS SELECT * FROM monitor_account WHERE workspace_id = (SELECT id FROM monitor_workspace WHERE slug='bench-1m');
CREATE TABLE fl_a4 (LIKE monitor_account INCLUDING ALL);
ALTER TABLE fl_a4 ADD FOREIGN KEY (workspace_id) REFERENCES monitor_workspace(id) DEFERRABLE INITIALLY DEFERRED;
\echo accounts 4 idx + FK deferred (as Django makes it)
BEGIN;
INSERT INTO fl_a4 (workspace_id, twitter_id, screen_name) SELECT workspace_id, twitter_id, screen_name FROM src_a ORDER BY twitter_id;
COMMIT;
CREATE TABLE fl_a3 (LIKE monitor_account INCLUDING ALL);
DROP INDEX fl_a3_workspace_id_idx;
\echo 3 idx no FK
BEGIN;
INSERT INTO fl_a3 (workspace_id, twitter_id, screen_name) SELECT workspace_id, twitter_id, screen_name FROM src_a ORDER BY twitter_id;
COMMIT;
SELECT conname, condeferrable, condeferred FROM pg_constraint WHERE conrelid='monitor_account'::regclass AND contype='f';
DROP TABLE fl_a4, fl_a3;
