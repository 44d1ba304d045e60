\timing on
SET work_mem='64MB';
CREATE TEMP TABLE src_d AS SELECT * FROM monitor_dailyinfluence WHERE workspace_id = (SELECT id FROM monitor_workspace WHERE slug='bench-1m');
CREATE TEMP TABLE src_c AS SELECT * FROM monitor_cascadeinfluence c WHERE tweet_id IN (SELECT id FROM monitor_tweet WHERE workspace_id=(SELECT id FROM monitor_workspace WHERE slug='bench-1m'));
SELECT count(*) FROM src_d; SELECT count(*) FROM src_c;
-- daily: 4 indexes (as is)
CREATE TABLE fl_d4 (LIKE monitor_dailyinfluence INCLUDING ALL);
INSERT INTO fl_d4 (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d;
-- daily: composite key, 3 indexes
CREATE TABLE fl_d3 (LIKE monitor_dailyinfluence INCLUDING ALL);
ALTER TABLE fl_d3 DROP CONSTRAINT fl_d3_pkey; ALTER TABLE fl_d3 DROP COLUMN id;
INSERT INTO fl_d3 (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d;
-- daily: unindexed
CREATE TABLE fl_d0 (LIKE monitor_dailyinfluence);
ALTER TABLE fl_d0 DROP COLUMN id;
INSERT INTO fl_d0 (workspace_id, publisher_id, account_id, day, label, influence, cascades) SELECT workspace_id, publisher_id, account_id, day, label, influence, cascades FROM src_d;
-- cascade: 4 and 3 indexes
CREATE TABLE fl_c4 (LIKE monitor_cascadeinfluence INCLUDING ALL);
INSERT INTO fl_c4 (tweet_id, account_id, publisher_id, day, label, influence, followers, role) SELECT tweet_id, account_id, publisher_id, day, label, influence, followers, role FROM src_c ORDER BY tweet_id, account_id;
CREATE TABLE fl_c3 (LIKE monitor_cascadeinfluence INCLUDING ALL);
ALTER TABLE fl_c3 DROP CONSTRAINT fl_c3_pkey; ALTER TABLE fl_c3 DROP COLUMN id;
INSERT INTO fl_c3 (tweet_id, account_id, publisher_id, day, label, influence, followers, role) SELECT tweet_id, account_id, publisher_id, day, label, influence, followers, role FROM src_c ORDER BY tweet_id, account_id;
CREATE TABLE fl_c0 (LIKE monitor_cascadeinfluence);
ALTER TABLE fl_c0 DROP COLUMN id;
INSERT INTO fl_c0 (tweet_id, account_id, publisher_id, day, label, influence, followers, role) SELECT tweet_id, account_id, publisher_id, day, label, influence, followers, role FROM src_c ORDER BY tweet_id, account_id;
DROP TABLE fl_d4, fl_d3, fl_d0, fl_c4, fl_c3, fl_c0;
