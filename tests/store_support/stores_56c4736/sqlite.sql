-- A SQLite store as planc wrote it at commit 56c4736 (2026-11-29: schema
-- 4, task rows keyed by their position), for tests/it/order_migration.rs's
-- migration test: made by make.sh (beside it: `make.sh PLANC OUT`) with that
-- commit's debug planc, in short:
--   planc run init examples/jd_keyboard.plan --store URL --plan-id jd
--   planc run next --agent a1; planc run complete --agent a1 --result "Opened jd.com"
--   planc run add --name "Compare prices" --after 3; planc run add --name "Read reviews" --after 2
--   planc run remove 4; planc run next --agent a2; planc run add --name "Ask a friend"
--   planc run init examples/coding_agent.plan --plan-id plain; planc run next --agent a1
--   planc run add --name "Write the changelog" --after 1; planc run remove 2
-- then Python's `sqlite3` `iterdump()` of the file (after a WAL checkpoint).
-- sqlite.jd.export.json and sqlite.plain.export.json are the
-- documents of `GET /api/plans/{id}` from `planc serve` on that store (the
-- same commit), without the success envelope.

BEGIN TRANSACTION;
CREATE TABLE events (
             position INTEGER PRIMARY KEY AUTOINCREMENT,
             plan_id  TEXT NOT NULL,
             seq      INTEGER NOT NULL,
             record   TEXT NOT NULL,
             UNIQUE (plan_id, seq)
         );
INSERT INTO "events" VALUES(1,'jd',1,'{"revision":1,"at":"2026-11-29T11:35:02Z","op":"init","plan_status":"idle","events":[{"kind":"created","message":"Plan `jd` created with 5 task(s)","plan":{"id":"jd","title":"在京东购买机械键盘","goal":"在京东网站上搜索''机械键盘''，并将价格低于500元的第一款产品加入购物车。","language":"zh","status":"idle","done":0,"total":5}}]}');
INSERT INTO "events" VALUES(2,'jd',2,'{"revision":2,"at":"2026-11-29T11:35:02Z","op":"startNextTask","plan_status":"running","events":[{"kind":"started","task_id":1,"message":"Started task 1: Navigate to jd.com homepage","agent":"a1","task":{"id":1,"name":"Navigate to jd.com homepage","status":"in_progress","dependencies":[],"reasoning":"The first step is to open the target website.","result":null,"key":"open","step":"find","assignee":"browser","description":null,"optional":false,"retry":{"max":null,"count":0},"holder":{"agent":"a1","since":"2026-11-29T11:35:02Z"}}}]}');
INSERT INTO "events" VALUES(3,'jd',3,'{"revision":3,"at":"2026-11-29T11:35:02Z","op":"completeTask","plan_status":"running","events":[{"kind":"completed","task_id":1,"message":"Task 1 completed","agent":"a1","task":{"id":1,"name":"Navigate to jd.com homepage","status":"completed","dependencies":[],"reasoning":"The first step is to open the target website.","result":"Opened jd.com","key":"open","step":"find","assignee":"browser","description":null,"optional":false,"retry":{"max":null,"count":0}}}]}');
INSERT INTO "events" VALUES(4,'jd',4,'{"revision":4,"at":"2026-11-29T11:35:02Z","op":"addTask","plan_status":"running","events":[{"kind":"added","task_id":6,"message":"Task 6 added after task 3; task(s) 4 now depend on it","task":{"id":6,"name":"Compare prices","status":"pending","dependencies":[3],"reasoning":null,"result":null,"key":null,"step":"find","assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}}]}');
INSERT INTO "events" VALUES(5,'jd',5,'{"revision":5,"at":"2026-11-29T11:35:02Z","op":"addTask","plan_status":"running","events":[{"kind":"added","task_id":7,"message":"Task 7 added after task 2; task(s) 3 now depend on it","task":{"id":7,"name":"Read reviews","status":"pending","dependencies":[2],"reasoning":null,"result":null,"key":null,"step":"find","assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}}]}');
INSERT INTO "events" VALUES(6,'jd',6,'{"revision":6,"at":"2026-11-29T11:35:02Z","op":"removeTask","plan_status":"running","events":[{"kind":"removed","task_id":4,"message":"Task 4 removed successfully","task":{"id":4,"name":"Filter results by price (under 500)","status":"pending","dependencies":[6],"reasoning":"The goal requires filtering by price, which can only be done on the search results page.","result":null,"key":"filter","step":"buy","assignee":"browser","description":null,"optional":false,"retry":{"max":2,"count":0}}}]}');
INSERT INTO "events" VALUES(7,'jd',7,'{"revision":7,"at":"2026-11-29T11:35:02Z","op":"startNextTask","plan_status":"running","events":[{"kind":"started","task_id":2,"message":"Started task 2: Input ''机械键盘'' into search bar","agent":"a2","task":{"id":2,"name":"Input ''机械键盘'' into search bar","status":"in_progress","dependencies":[1],"reasoning":"Need to be on the homepage before I can use the search bar.","result":null,"key":"type_query","step":"find","assignee":"browser","description":null,"optional":false,"retry":{"max":null,"count":0},"holder":{"agent":"a2","since":"2026-11-29T11:35:02Z"}}}]}');
INSERT INTO "events" VALUES(8,'jd',8,'{"revision":8,"at":"2026-11-29T11:35:02Z","op":"addTask","plan_status":"running","events":[{"kind":"added","task_id":8,"message":"Task 8 added","task":{"id":8,"name":"Ask a friend","status":"pending","dependencies":[],"reasoning":null,"result":null,"key":null,"step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}}]}');
INSERT INTO "events" VALUES(9,'plain',1,'{"revision":1,"at":"2026-11-29T11:35:02Z","op":"init","plan_status":"idle","events":[{"kind":"created","message":"Plan `plain` created with 7 task(s)","plan":{"id":"plain","title":"Fix the flaky test tests::sync::reconnects_after_timeout","goal":"Make tests::sync::reconnects_after_timeout pass 50 times in a row without changing what it asserts","language":"en","status":"idle","done":0,"total":7}}]}');
INSERT INTO "events" VALUES(10,'plain',2,'{"revision":2,"at":"2026-11-29T11:35:02Z","op":"startNextTask","plan_status":"running","events":[{"kind":"started","task_id":1,"message":"Started task 1: Run tests::sync::reconnects_after_timeout 50 times and record every failure","agent":"a1","task":{"id":1,"name":"Run tests::sync::reconnects_after_timeout 50 times and record every failure","status":"in_progress","dependencies":[],"reasoning":"A flaky test must fail on demand before it can be fixed.","result":null,"key":"reproduce","step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0},"holder":{"agent":"a1","since":"2026-11-29T11:35:02Z"}}}]}');
INSERT INTO "events" VALUES(11,'plain',3,'{"revision":3,"at":"2026-11-29T11:35:02Z","op":"addTask","plan_status":"running","events":[{"kind":"added","task_id":8,"message":"Task 8 added after task 1; task(s) 2 now depend on it","task":{"id":8,"name":"Write the changelog","status":"pending","dependencies":[1],"reasoning":null,"result":null,"key":null,"step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}}]}');
INSERT INTO "events" VALUES(12,'plain',4,'{"revision":4,"at":"2026-11-29T11:35:02Z","op":"removeTask","plan_status":"running","events":[{"kind":"removed","task_id":2,"message":"Task 2 removed successfully","task":{"id":2,"name":"Read the logs of the failing runs and find what differs","status":"pending","dependencies":[8],"reasoning":null,"result":null,"key":"read_logs","step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}}]}');
CREATE TABLE plan_steps (
             plan_id TEXT PRIMARY KEY NOT NULL,
             steps   TEXT NOT NULL
         );
INSERT INTO "plan_steps" VALUES('jd','[{"id":"find","name":"Find the product","tasks":[1,2,7,3,6]},{"id":"buy","name":"Buy it","tasks":[5]}]');
CREATE TABLE plans (
             plan_id  TEXT PRIMARY KEY NOT NULL,
             revision INTEGER NOT NULL,
             doc      TEXT NOT NULL
         , summary TEXT NOT NULL DEFAULT '{}');
INSERT INTO "plans" VALUES('jd',8,'{"format":"planc/1","meta":{"id":"jd","title":"在京东购买机械键盘","goal":"在京东网站上搜索''机械键盘''，并将价格低于500元的第一款产品加入购物车。","language":"zh","max_iterations":null,"params":{"keyword":"机械键盘","max_price":500,"site":"jd.com"},"source":"/work/wt-order/examples/jd_keyboard.plan","created_at":"2026-11-29T11:35:02Z","updated_at":"2026-11-29T11:35:02Z"},"roles":[{"id":"browser","description":"Drives the web browser"}],"steps":[],"state":{"status":"running","current_task_id":2,"revision":8,"iteration_count":0},"tasks":[]}','{"plan_id":"jd","title":"在京东购买机械键盘","goal":"在京东网站上搜索''机械键盘''，并将价格低于500元的第一款产品加入购物车。","status":"running","revision":8,"updated_at":"2026-11-29T11:35:02Z","counts":{"total":7,"pending":5,"in_progress":1,"completed":1,"failed":0,"skipped":0}}');
INSERT INTO "plans" VALUES('plain',4,'{"format":"planc/1","meta":{"id":"plain","title":"Fix the flaky test tests::sync::reconnects_after_timeout","goal":"Make tests::sync::reconnects_after_timeout pass 50 times in a row without changing what it asserts","language":"en","max_iterations":40,"params":{"test_name":"tests::sync::reconnects_after_timeout","runs":50},"source":"/work/wt-order/examples/coding_agent.plan","created_at":"2026-11-29T11:35:02Z","updated_at":"2026-11-29T11:35:02Z"},"roles":[],"steps":[],"state":{"status":"running","current_task_id":1,"revision":4,"iteration_count":0},"tasks":[]}','{"plan_id":"plain","title":"Fix the flaky test tests::sync::reconnects_after_timeout","goal":"Make tests::sync::reconnects_after_timeout pass 50 times in a row without changing what it asserts","status":"running","revision":4,"updated_at":"2026-11-29T11:35:02Z","counts":{"total":7,"pending":6,"in_progress":1,"completed":0,"failed":0,"skipped":0}}');
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO "schema_version" VALUES(4);
CREATE TABLE tasks (
             plan_id  TEXT NOT NULL,
             position INTEGER NOT NULL,
             task     TEXT NOT NULL,
             PRIMARY KEY (plan_id, position)
         ) WITHOUT ROWID;
INSERT INTO "tasks" VALUES('jd',0,'{"id":1,"name":"Navigate to jd.com homepage","status":"completed","dependencies":[],"reasoning":"The first step is to open the target website.","result":"Opened jd.com","key":"open","step":"find","assignee":"browser","description":null,"optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('jd',1,'{"id":2,"name":"Input ''机械键盘'' into search bar","status":"in_progress","dependencies":[1],"reasoning":"Need to be on the homepage before I can use the search bar.","result":null,"key":"type_query","step":"find","assignee":"browser","description":null,"optional":false,"retry":{"max":null,"count":0},"holder":{"agent":"a2","since":"2026-11-29T11:35:02Z"}}');
INSERT INTO "tasks" VALUES('jd',2,'{"id":7,"name":"Read reviews","status":"pending","dependencies":[2],"reasoning":null,"result":null,"key":null,"step":"find","assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('jd',3,'{"id":3,"name":"Click the search button","status":"pending","dependencies":[7],"reasoning":"After typing the search term, I must click the button to get results.","result":null,"key":"search","step":"find","assignee":"browser","description":null,"optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('jd',4,'{"id":6,"name":"Compare prices","status":"pending","dependencies":[3],"reasoning":null,"result":null,"key":null,"step":"find","assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('jd',5,'{"id":5,"name":"Add the first item to the shopping cart","status":"pending","dependencies":[6],"reasoning":"The final step after filtering is to add the item to the cart.","result":null,"key":"add_to_cart","step":"buy","assignee":"browser","description":"Pick the first result whose price is under 500 yuan.\nDo not open a product in a new tab.","optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('jd',6,'{"id":8,"name":"Ask a friend","status":"pending","dependencies":[],"reasoning":null,"result":null,"key":null,"step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('plain',0,'{"id":1,"name":"Run tests::sync::reconnects_after_timeout 50 times and record every failure","status":"in_progress","dependencies":[],"reasoning":"A flaky test must fail on demand before it can be fixed.","result":null,"key":"reproduce","step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0},"holder":{"agent":"a1","since":"2026-11-29T11:35:02Z"}}');
INSERT INTO "tasks" VALUES('plain',1,'{"id":8,"name":"Write the changelog","status":"pending","dependencies":[1],"reasoning":null,"result":null,"key":null,"step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('plain',2,'{"id":3,"name":"Write down the most likely cause and how to confirm it","status":"pending","dependencies":[8],"reasoning":null,"result":null,"key":"hypothesis","step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('plain',3,'{"id":4,"name":"Confirm the cause with a deterministic reproduction","status":"pending","dependencies":[3],"reasoning":null,"result":null,"key":"confirm","step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":3,"count":0}}');
INSERT INTO "tasks" VALUES('plain',4,'{"id":5,"name":"Fix the cause in the code, not in the test","status":"pending","dependencies":[4],"reasoning":null,"result":null,"key":"fix","step":null,"assignee":null,"description":"Keep the test''s assertions as they are.\nIf the fix needs a new seam for time or I/O, add it to the code under test.","optional":false,"retry":{"max":null,"count":0}}');
INSERT INTO "tasks" VALUES('plain',5,'{"id":6,"name":"Run tests::sync::reconnects_after_timeout 50 times; every run must pass","status":"pending","dependencies":[5],"reasoning":null,"result":null,"key":"verify","step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":2,"count":0}}');
INSERT INTO "tasks" VALUES('plain',6,'{"id":7,"name":"Summarise the cause and the fix for the pull request","status":"pending","dependencies":[6],"reasoning":null,"result":null,"key":"summarise","step":null,"assignee":null,"description":null,"optional":false,"retry":{"max":null,"count":0}}');
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('events',12);
COMMIT;
