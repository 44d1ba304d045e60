-- What the pairs index (monitor/services/search_pairs.py) costs an import: 100,000 of workspace 1's newest tweets
-- inserted again under new status ids in one statement (the documents' trigger and every index of both tables),
-- rolled back; then the same with the workspace's pairs index dropped inside the transaction (rolled back too).
-- On a database that claims_search_bench.py loaded and built the index on (benchmarks/claims.md):
--     psql -h 127.0.0.1 -U postgres sw_claims_1m -f benchmarks/claims_pairs_insert.sql
-- The two INSERT timings are the figures; run it twice, and VACUUM monitor_tweetdocument before searching again.
\set columns 'created_at, text, label, author_followers, graph_source, times_known, compute_status, n_participants, n_edges, n_orphans, reach, unit, computed_at, author_id, collection_id, compute_run_id, workspace_id, domains, hashtags, urls'
\set insert 'INSERT INTO monitor_tweet (tweet_id, ' :columns ') SELECT tweet_id + 1000000000000000, ' :columns ' FROM monitor_tweet WHERE workspace_id = 1 ORDER BY id DESC LIMIT 100000'
\timing on
BEGIN;
:insert;
ROLLBACK;
BEGIN;
SELECT index_name AS idx FROM monitor_searchpairs WHERE workspace_id = 1 \gset
DROP INDEX :"idx";
:insert;
ROLLBACK;
