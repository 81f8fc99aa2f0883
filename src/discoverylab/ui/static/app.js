// discoverylab browser UI: play, replay, leaderboard. Plain JS, no build step; all text goes
// through textContent (never innerHTML), since messages and logs are untrusted.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
const GROUND = /^(grass|path|floor|wall|sand|soil|water|road|fence|sand path)$/;
const MANY = 3;  // more nearby objects of one name than this are listed once (the nearest)

const NO_ANSWER = "The server did not answer (stopped, or the network is down). Everything up to the step shown is saved: " +
  "try again, or reload the page once the server is back.";

async function api(path, options) {
  let res;
  try { res = await fetch(path, options); } catch (e) { throw Object.assign(new Error(NO_ANSWER), { status: 0 }); }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(body.detail || `${res.status} ${res.statusText}`), { status: res.status });
  return body;
}
const post = (path, data) => api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data) });
function status(text, bad) { $("status").textContent = text || ""; $("status").className = bad ? "bad" : ""; }

// ---- pages --------------------------------------------------------------------------------
function showPage() {
  const name = location.pathname.replace(/^\//, "") || "play";
  for (const page of document.querySelectorAll(".page")) page.hidden = page.id !== name;
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.page === name);
  if (name === "replay") initReplay();
  if (name === "leaderboard") loadBoard();
}

// ---- play ---------------------------------------------------------------------------------
let tasks = [];
let game = null;
let sel = { arg1: null, arg2: null };
let names = {};
let study = false;  // the server assigns instances (sealed test split): no seed to choose
let hist = [];  // every step's action and message (the readings), from the server
const GAME_KEY = "discoverylab.game";  // localStorage: a closed tab or a restarted server resumes
const MY_GAMES_KEY = "discoverylab.games";  // localStorage: ids of the games this browser played (the results download)
const MAX_MY_GAMES = 200;  // the server exports at most 200 games at once

// The results download names games by id (the only credential the UI has; a participant name
// anyone can type): the page keeps the ids of the games it played, newest last.
function myGames() {
  try { const ids = JSON.parse(localStorage.getItem(MY_GAMES_KEY) || "[]"); return Array.isArray(ids) ? ids.filter((i) => typeof i === "string") : []; }
  catch (e) { return []; }
}

function rememberGame(id) {
  const ids = myGames().filter((i) => i !== id);
  ids.push(id);
  localStorage.setItem(MY_GAMES_KEY, JSON.stringify(ids.slice(-MAX_MY_GAMES)));
  drawExport();
}

function drawExport() {
  const ids = encodeURIComponent(myGames().join(","));
  $("export-json").href = `/api/results?format=json&games=${ids}`;
  $("export-csv").href = `/api/results?format=csv&games=${ids}`;
  $("export").hidden = !myGames().length;
}

// Feed read-marks are kept for the current game only: a started game drops every other game's
// (they were never removed before, one key per game played, for good).
function pruneFeedMarks(keep) {
  const stale = Object.keys(localStorage).filter((k) => k.startsWith("feed.") && k !== `feed.${keep}`);
  for (const k of stale) localStorage.removeItem(k);  // collected first: removing reorders the keys
}

async function initPlay() {
  const config = await api("/api/config");
  study = config.study;
  $("seed-label").hidden = study;
  $("participant-label").hidden = !study;
  tasks = await api("/api/tasks");
  for (const t of tasks) $("task").append(new Option(`${t.task} (${t.suite})`, t.task));
  const fill = () => {
    const t = tasks.find((x) => x.task === $("task").value);
    $("difficulty").replaceChildren(...t.difficulties.map((d) => new Option(d, d)));
    if (t.difficulties.includes("normal")) $("difficulty").value = "normal";
  };
  $("task").addEventListener("change", fill);
  fill();
  $("picker").addEventListener("submit", (ev) => { ev.preventDefault(); newGame(); });
  for (const box of ["grid", "show-ground"]) $(box).addEventListener("change", () => { $(box).blur(); if (game) render(); });
  $("view").addEventListener("click", clickView);
  $("clear-selection").addEventListener("click", () => { sel = { arg1: null, arg2: null }; drawSelection(); });
  $("show-scorecard").addEventListener("click", showScorecard);
  $("submit-report").addEventListener("click", submitReport);
  $("keys-hint").addEventListener("click", () => { $("help").hidden = !$("help").hidden; $("keys-hint").blur(); });
  $("command-form").addEventListener("submit", (ev) => { ev.preventDefault(); sendCommand(); });
  $("action-menu").addEventListener("change", () => { if (!menuByKeys) menuChosen(); });  // a click chooses at once
  $("action-menu").addEventListener("keydown", menuKey);
  $("action-menu").addEventListener("pointerdown", () => { menuByKeys = false; });
  $("action-menu").addEventListener("blur", () => { $("action-menu").value = ""; });
  $("history-copy").addEventListener("click", copyHistory);
  $("feed-read").addEventListener("click", markFeedRead);
  $("report").addEventListener("keydown", reportKey);
  $("report").addEventListener("input", saveDraft);
  $("command").addEventListener("keydown", (ev) => { if (ev.key === "Escape") { ev.preventDefault(); $("command").blur(); } });
  document.addEventListener("keydown", onKey);
  document.addEventListener("click", (ev) => { const t = ev.target; if (t.tagName === "BUTTON" || (t.tagName === "INPUT" && t.type === "checkbox")) t.blur(); });
  const saved = localStorage.getItem(GAME_KEY);
  pruneFeedMarks(saved);
  drawExport();
  if (saved) {
    try {
      game = await api(`/api/games/${encodeURIComponent(saved)}`);
      await loadHistory();
      if (!game.finished) $("report").value = readDraft().report || "";  // a reload mid-report keeps what was written
      else localStorage.removeItem(`draft.${game.id}`);
      if (study && game.participant && !$("participant").value) $("participant").value = game.participant;  // the next game is theirs too
      rememberGame(game.id);
      render();
      status(game.finished ? "" : "Resumed your game.");
    }
    catch (e) {  // only an unknown game is forgotten: a busy or failing server must not lose it
      if (e.status === 404) localStorage.removeItem(GAME_KEY);
      else status(`Could not resume your game (${e.message}); reload the page to try again.`, true);
    }
  }
}

let starting = false;  // a double click on New game starts one game, not an orphan beside it

async function newGame() {
  if (starting) return;
  starting = true;
  $("new-game").disabled = true;
  try {
    await stepQueue;  // the keys pressed before New game are taken first
    const awaiting = game && !game.finished && (game.terminated || game.truncated);  // only the report is left
    if (awaiting && !confirm("Your knowledge report for this game is not handed in yet. Start a new game without it? " +
        "The game keeps its outcome, with knowledge 0. (Cancel takes you back to the report.)")) { $("report").focus(); return; }
    if (game && !game.finished && !awaiting && game.step > 0 &&
        !confirm("Start a new game? The current one ends as abandoned (failed).")) return;
    status("starting…");
    if (game && !game.finished) {
      await api(`/api/games/${game.id}?without_report=true`, { method: "DELETE" }).catch(() => null);
      localStorage.removeItem(`draft.${game.id}`);
    }
    const spec = { task: $("task").value, difficulty: $("difficulty").value };
    if (!study) spec.seed = Number($("seed").value);
    if (study && $("participant").value) spec.participant = $("participant").value;
    game = await post("/api/games", spec);
    localStorage.setItem(GAME_KEY, game.id);
    pruneFeedMarks(game.id);
    rememberGame(game.id);
    sel = { arg1: null, arg2: null };
    hist = [game.entry];
    $("scorecard").replaceChildren();
    $("tile-objects").replaceChildren();
    $("report").value = "";
    $("report-result").textContent = "";
    render();
    status("");
    $("new-game").blur();
  } catch (e) { status(e.message, true); }
  finally { starting = false; $("new-game").disabled = false; }
}

async function loadHistory() {
  if (!game) return;
  hist = (await api(`/api/games/${game.id}/history`)).history;
}

function took(next) {
  if (game && next.id !== game.id) return;  // a step of the game before New game: not this one's
  game = next;
  const last = hist.length ? hist[hist.length - 1].step : -1;
  if (game.entry.step > last + 1) loadHistory().then(render).catch(() => null);  // steps played in another tab
  else if (last < game.entry.step) hist.push(game.entry);
  render();
  $("scorecard").replaceChildren();  // looking again is a click, counted once per step
}

// Steps go to the server one at a time, in the order the keys were pressed: concurrent requests
// could be taken in another order. When one fails, the keys pressed after it are dropped (they
// were meant for the world that step would have made).
const MAX_QUEUED = 8;
let stepQueue = Promise.resolve();
let queued = 0;
let failures = 0;

function inOrder(send) {
  if (queued >= MAX_QUEUED) { status("Waiting for the server: your last keys are not taken yet.", true); return stepQueue; }
  queued++;
  const ticket = failures;
  stepQueue = stepQueue.then(async () => {
    if (ticket !== failures) return;
    const slow = setTimeout(() => status("Waiting for the server…"), 1500);
    try { await send(); } catch (e) { failures++; status(e.message, true); } finally { clearTimeout(slow); }
  }).finally(() => { queued--; });
  return stepQueue;
}

function act(action) {
  if (!game) { status("Start a game first.", true); return; }
  const id = game.id;
  inOrder(async () => { if (game && game.id === id) { took(await post(`/api/games/${id}/step`, action)); status(""); } });
}

function sendCommand() {
  const text = $("command").value.trim();
  if (!text) { $("command").blur(); return; }
  if (!game) { status("Start a game first.", true); return; }
  if (text === "help" || text === "?") { $("help").hidden = false; return; }
  const id = game.id;
  inOrder(async () => {  // a command that does not parse costs no step (and keeps its text to fix)
    if (!game || game.id !== id) return;
    took(await post(`/api/games/${id}/command`, { text }));
    if ($("command").value.trim() === text) $("command").value = "";
    $("command").blur();  // back to the game keys
    status("");
  });
}

function refreshView() {
  if (game) $("view").src = `/api/games/${game.id}/view.png?grid=${$("grid").checked}&step=${game.step}`;
}

function objectItem(o, extra) {
  names[o.uuid] = o.name;
  const li = el("li");
  li.dataset.uuid = o.uuid;
  li.dataset.name = o.name;
  li.append(el("span", o.description || o.name), el("span", ` [${o.uuid}]${extra || ""}`, "uuid"));
  li.addEventListener("click", (ev) => choose(o.uuid, ev.shiftKey));
  return li;
}

function banner() {
  const b = $("banner");
  if (!game || !game.outcome) { b.hidden = true; return; }
  if (game.outcome === "ended") {  // a sealed game: its outcome is the evaluator's, never shown here
    const end = game.terminated ? "the task is decided" : game.truncated ? "the step limit was reached" : "the game was closed";
    b.textContent = `The episode has ended: ${end}. ` + (game.finished
      ? "Your report is handed in and recorded. Game over." : "Hand in your knowledge report (k) to finish.");
    b.className = "ended";
    b.dataset.outcome = game.outcome;
    b.hidden = false;
    return;
  }
  const won = game.outcome === "success";
  const why = game.truncated && !game.terminated ? "the step limit was reached" : won ? "the task is completed" : "the task failed";
  const next = game.finished ? "Game over." : "Hand in your knowledge report (k) to finish.";
  b.textContent = `${won ? "Success" : "Failure"}: ${why}. ${next}`;
  b.className = won ? "success" : "failure";
  b.dataset.outcome = game.outcome;
  b.hidden = false;
}

const seenFeed = () => new Set(JSON.parse(localStorage.getItem(`feed.${game.id}`) || "[]"));

function markFeedRead() {
  if (!game) return;
  localStorage.setItem(`feed.${game.id}`, JSON.stringify(game.feed.map((p) => p.postID)));
  renderFeed();
  $("feed-read").blur();
}

function renderFeed() {
  const read = seenFeed();
  const fresh = game.feed.filter((p) => !read.has(p.postID)).length;
  $("feed-badge").textContent = fresh ? `${fresh} new` : "";
  $("feed-badge").hidden = !fresh;
  $("feed").replaceChildren(...[...game.feed].reverse().map((p) => {
    const li = el("li", `#${p.postID} ${p.author || ""}${p.title ? " — " + p.title : ""}: ${p.content || ""}`);
    if (!read.has(p.postID)) li.className = "new";
    return li;
  }));
}

function render() {
  const obs = game.observation;
  names = {};
  refreshView();
  const loc = obs.agentLocation || {};
  const where = game.seed === null ? `instance ${game.instance.split}#${game.instance.index}` : `seed ${game.seed}`;
  const again = game.replay_of ? " · replay (an earlier game played this instance)"
    : game.gold_seen ? " · gold seen (another game of this instance ended while this one was open)" : "";
  const who = game.participant ? ` · ${game.participant}` : "";
  $("game-info").textContent = `${game.task} · ${game.difficulty} · ${where}${who}${again} · step ${game.step}/${game.max_steps} · at (${loc.x}, ${loc.y}) facing ${loc.faceDirection}`;
  $("task-text").textContent = (obs.taskProgress || []).map((t) => t.description).join("\n");
  $("last-message").textContent = game.entry.message;
  $("inventory").replaceChildren(...(obs.inventoryObjects || []).map((o) => objectItem(o)));
  $("accessible").replaceChildren(...(obs.accessibleEnvironmentObjects || []).map((o) => objectItem(o)));
  const near = [];
  const all = $("show-ground").checked;
  const flat = [];
  for (const [dir, objs] of Object.entries((obs.nearbyObjects || {}).objects || {})) for (const o of objs) flat.push([dir, o]);
  const count = {};
  for (const [, o] of flat) count[o.name] = (count[o.name] || 0) + 1;
  const listed = {};
  for (const [dir, o] of flat.sort((a, b) => a[1].distance - b[1].distance)) {
    if (!all && GROUND.test(o.name)) { names[o.uuid] = o.name; continue; }
    listed[o.name] = (listed[o.name] || 0) + 1;
    if (!all && count[o.name] > MANY && listed[o.name] > 1) { names[o.uuid] = o.name; continue; }  // 40 launch pads: one line
    near.push(objectItem(o, ` ${dir} ${o.distance}` + (!all && count[o.name] > MANY ? ` (nearest of ${count[o.name]}; tick "show all")` : "")));
  }
  $("nearby").replaceChildren(...near);
  const shown = new Set(Object.keys(names).map(Number));
  const shownNames = new Set(Object.values(names));
  const earlier = Object.entries(game.seen).filter(([u, n]) => !shown.has(Number(u)) && !shownNames.has(n) && shownNames.add(n));
  $("seen").replaceChildren(...earlier.map(([u, n]) => objectItem({ uuid: Number(u), name: n }, " (seen earlier)")));
  const agents = (obs.nearbyAgents || {}).list_of_agents || {};
  $("agents").replaceChildren(...Object.entries(agents).map(([who2, acts]) => el("li", `${who2}: ${(acts || []).map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join("; ") || "—"}`)));
  const box = obs.dialog_box || {};
  $("dialog").hidden = !box.is_in_dialog;
  if (box.is_in_dialog) {
    $("dialog-in").textContent = box.dialogIn || "";
    $("dialog-options").replaceChildren(...Object.entries(box.dialogOptions || {}).map(([k, v]) => {
      const li = el("li", `${k}. ${v}`);
      li.value = Number(k);
      li.addEventListener("click", () => act({ chosen_dialog_option_int: Number(k) }));
      return li;
    }));
  }
  renderFeed();
  $("history").replaceChildren(...[...hist].reverse().map((h) => el("li", `${h.step}. ${h.label} → ${h.message}`, h.success === false ? "bad" : "")));
  fillMenu(obs);
  $("submit-report").disabled = game.finished;
  if (game.knowledge) showKnowledge(game.knowledge, $("report-result"), game.answers);
  loadSheet();
  banner();
  drawSelection();
}

// The action menu: every action the agents have; choosing one fills the command line.
const TEMPLATES = {
  MOVE_DIRECTION: "move north", ROTATE_DIRECTION: "rotate north", PICKUP: "take ", DROP: "drop ", PUT: "put  in ",
  OPEN: "open ", CLOSE: "close ", ACTIVATE: "activate ", DEACTIVATE: "deactivate ", TALK: "talk ", EAT: "eat ",
  READ: "read ", USE: "use  on ", WAIT: "wait", TELEPORT_TO_LOCATION: "tp ", TELEPORT_TO_OBJECT: "goto ",
  DISCOVERY_FEED_GET_UPDATES: "feed", DISCOVERY_FEED_GET_ARTICLES: "articles", DISCOVERY_FEED_GET_POST_BY_ID: "post ",
  MOVE_FORWARD: "forward", MOVE_BACKWARD: "back", ROTATE_CW: "right", ROTATE_CCW: "left",
};

let menuFor = null;  // the game whose actions and places the menu lists

function fillMenu(obs) {
  if (menuFor === game.id) return;
  menuFor = game.id;
  const opts = [new Option("— action menu (m) —", "")];
  for (const a of obs.availableActions || []) opts.push(new Option(`${a.name}: ${a.description}`, a.name));
  for (const name of ["MOVE_FORWARD", "MOVE_BACKWARD", "ROTATE_CW", "ROTATE_CCW"]) opts.push(new Option(name, name));
  for (const place of obs.teleportLocations || []) opts.push(new Option(`teleport: ${place}`, `@${place}`));
  $("action-menu").replaceChildren(...opts);
}

// Keys in the report box and the answer sheet: ctrl+Enter hands them in, Esc gives the keys back
// to the game (what was written stays, as a draft).
function reportKey(ev) {
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); submitReport(); }
  if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); ev.target.blur(); }
}

// In the action menu the arrow keys move through the actions (a closed select would choose at
// each one) and Enter chooses; a click, or Enter in the opened list, chooses at once.
let menuByKeys = false;

function menuKey(ev) {
  if (["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End"].includes(ev.key) && !ev.altKey) menuByKeys = true;
  else if (ev.key === " " || ev.key === "F4" || ev.altKey) menuByKeys = false;  // the list opens: its Enter is a change
  else if (ev.key === "Enter") { ev.preventDefault(); menuByKeys = false; menuChosen(); }
}

function menuChosen() {
  const v = $("action-menu").value;
  $("action-menu").value = "";
  if (!v) return;
  let text = v.startsWith("@") ? `tp ${v.slice(1)}` : TEMPLATES[v] || v.toLowerCase();
  const n = (u) => (u === null ? "" : String(u));
  text = text.replace("take ", `take ${n(sel.arg1)}`).replace("use  on ", `use ${n(sel.arg1)} on ${n(sel.arg2)}`).replace("put  in ", `put ${n(sel.arg1)} in ${n(sel.arg2)}`);
  for (const verb of ["drop", "open", "close", "activate", "deactivate", "talk", "eat", "read", "goto"]) if (text === `${verb} `) text += n(sel.arg1);
  $("command").value = text;
  $("command").focus();
}

function copyHistory() {
  const text = hist.map((h) => `${h.step}\t${h.label}\t${h.message.replace(/\n/g, " / ")}`).join("\n");
  const done = () => status("History copied.");
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text, done));
  else fallbackCopy(text, done);
  $("history-copy").blur();
}

function fallbackCopy(text, done) {
  const area = el("textarea"); area.value = text; document.body.append(area); area.select();
  try { document.execCommand("copy"); done(); } catch (e) { status("Copy failed: select the history and copy it.", true); }
  area.remove();
}

function choose(uuid, second) {
  if (second) sel.arg2 = uuid; else sel.arg1 = uuid;
  drawSelection();
}

function cycle(which, delta) {
  const items = [...document.querySelectorAll("ul.objects li")].map((li) => Number(li.dataset.uuid));
  if (!items.length) return;
  const at = items.indexOf(sel[which]);
  sel[which] = items[(at + delta + items.length) % items.length];
  drawSelection();
  const li = document.querySelector(`ul.objects li.${which}`);
  if (li) li.scrollIntoView({ block: "nearest" });
}

function drawSelection() {
  const label = (u) => (u === null ? "—" : `${names[u] || (game && game.seen[u]) || "object"} [${u}]`);
  $("arg1").textContent = label(sel.arg1);
  $("arg2").textContent = label(sel.arg2);
  for (const li of document.querySelectorAll("ul.objects li")) {
    li.classList.toggle("arg1", Number(li.dataset.uuid) === sel.arg1);
    li.classList.toggle("arg2", Number(li.dataset.uuid) === sel.arg2);
  }
}

function clickView(ev) {
  if (!game) return;
  const rect = $("view").getBoundingClientRect();
  const tx = Math.floor(((ev.clientX - rect.left) / rect.width) * 24);
  const ty = Math.floor(((ev.clientY - rect.top) / rect.height) * 16);
  const here = Object.entries(game.positions).filter(([, p]) => p[0] === tx && p[1] === ty).map(([u]) => Number(u));
  const buttons = here.map((u) => {
    const b = el("button", `${names[u] || "object"} [${u}]`);
    b.type = "button";
    b.addEventListener("click", (e) => { choose(u, e.shiftKey); b.blur(); });
    return b;
  });
  $("tile-objects").replaceChildren(el("span", here.length ? "On that tile: " : "Nothing you can see closely there.", "hint"), ...buttons);
  if (here.length === 1) choose(here[0], ev.shiftKey);
}

const ONE_ARG = { " ": "PICKUP", d: "DROP", o: "OPEN", c: "CLOSE", a: "ACTIVATE", s: "DEACTIVATE", t: "TALK", r: "READ", e: "EAT", g: "TELEPORT_TO_OBJECT" };
const TWO_ARGS = { p: "PUT", u: "USE" };
const NO_ARG = { ArrowUp: "MOVE_FORWARD", ArrowDown: "MOVE_BACKWARD", ArrowLeft: "ROTATE_CCW", ArrowRight: "ROTATE_CW", w: "WAIT", v: "DISCOVERY_FEED_GET_UPDATES", f: "DISCOVERY_FEED_GET_ARTICLES" };
const SHIFT_MOVE = { ArrowUp: "north", ArrowDown: "south", ArrowLeft: "west", ArrowRight: "east" };
const TYPING = /^(text|number|search|password|email)$/;

function startCommand(prefix) {
  $("command").value = prefix;
  $("command").focus();
}

function onKey(ev) {
  const t = ev.target;
  const tag = (t.tagName || "").toLowerCase();
  if (tag === "textarea" || (tag === "select" && t.id !== "action-menu") || (tag === "input" && TYPING.test(t.type))) return;
  if (t.id === "action-menu" && ev.key !== "Escape") return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (location.pathname === "/replay") { replayKey(ev); return; }
  if (location.pathname === "/leaderboard") return;
  if (tag === "button" && ev.key === "Enter") return;  // a focused button: Enter presses it
  if (ev.key === "Tab") {  // on the game, Tab shows the task; on a control it moves the focus, as on any page
    const onPage = t === document.body || t === document.documentElement;
    if (onPage && ev.shiftKey) { ev.preventDefault(); $("task").focus(); }  // shift+tab: the game picker
    else if (onPage && game) { ev.preventDefault(); $("task-box").hidden = !$("task-box").hidden; }
    return;
  }
  if (tag === "button" || tag === "input") t.blur();  // other keys act on the game (a clicked checkbox kept them)
  const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
  if (ev.key === "Escape") { $("help").hidden = true; if (t !== document.body && t.blur) t.blur(); return; }
  if (key === "?") { $("help").hidden = !$("help").hidden; return; }
  if (ev.key === ":" || ev.key === "Enter") { ev.preventDefault(); startCommand(""); return; }
  if (key === "l") { ev.preventDefault(); startCommand("tp "); return; }
  if (key === "n") { ev.preventDefault(); startCommand("post "); return; }
  if (key === "m") { ev.preventDefault(); $("action-menu").focus(); return; }
  if (key === "h") { ev.preventDefault(); copyHistory(); return; }
  if (key === "k") { ev.preventDefault(); $("report").focus(); return; }
  if (ev.key === "[" || ev.key === "]") { ev.preventDefault(); cycle("arg1", ev.key === "]" ? 1 : -1); return; }
  if (ev.key === "{" || ev.key === "}") { ev.preventDefault(); cycle("arg2", ev.key === "}" ? 1 : -1); return; }
  if (ev.shiftKey && SHIFT_MOVE[ev.key]) { ev.preventDefault(); act({ action: "MOVE_DIRECTION", arg1: SHIFT_MOVE[ev.key] }); return; }
  if (/^[1-9]$/.test(key) && game && game.observation.dialog_box && game.observation.dialog_box.is_in_dialog) {
    act({ chosen_dialog_option_int: Number(key) });
    return;
  }
  if (NO_ARG[ev.key] || NO_ARG[key]) { ev.preventDefault(); act({ action: NO_ARG[ev.key] || NO_ARG[key] }); return; }
  if (ONE_ARG[key]) {
    ev.preventDefault();
    if (sel.arg1 === null) { status(`Choose an object first ([ / ] or click), then press ${key === " " ? "space" : key}.`, true); return; }
    act({ action: ONE_ARG[key], arg1: sel.arg1 });
    return;
  }
  if (TWO_ARGS[key]) {
    ev.preventDefault();
    if (sel.arg1 === null || sel.arg2 === null) { status("Choose arg1 ([ / ] or click) and arg2 ({ / } or shift+click) first.", true); return; }
    act({ action: TWO_ARGS[key], arg1: sel.arg1, arg2: sel.arg2 });
  }
}

async function showScorecard() {
  if (!game) return;
  const truncated = game.truncated && !game.terminated;  // the task is not completed, but the episode is over
  try { drawScorecard(await api(`/api/games/${game.id}/scorecard`), $("scorecard"), truncated); } catch (e) { status(e.message, true); }
}

function drawScorecard(card, table, truncated) {
  const sealed = card.completedSuccessfully === undefined;  // a sealed game's card never says how it went
  const state = card.completed ? (sealed ? "decided" : card.completedSuccessfully ? "completed" : "failed")
    : truncated ? "step limit reached" : "in progress";
  if (!card.scoreCard) {  // before the game has ended (a sealed game: ever): task progress only
    const tr = el("tr");
    tr.append(el("th", `${card.taskName} (${state})`), el("th", sealed ? "scored by the evaluator" : "items and score after your report", "num"));
    table.replaceChildren(tr);
    return;
  }
  const rows = card.scoreCard.map((item) => {
    const tr = el("tr");
    tr.append(el("td", item.name), el("td", `${item.score}/${item.maxScore}`, "num"));
    return tr;
  });
  const total = el("tr");
  total.append(el("th", `total (${state})`), el("th", `${card.score}/${card.maxScore} = ${card.scoreNormalized.toFixed(2)}`, "num"));
  table.replaceChildren(...rows, total);
}

let sheetFor = null;  // the game id whose answer sheet the form shows

async function loadSheet() {
  if (!game || sheetFor === game.id) return;
  sheetFor = game.id;
  $("answer-fields").replaceChildren();
  $("answer-sheet").hidden = true;
  const form = (await api(`/api/games/${game.id}/answer_form`).catch(() => ({ form: null }))).form;
  if (!form) return;
  $("answer-fields").replaceChildren(...form.fields.map((f) => {
    const tr = el("tr");
    let input;
    if (f.kind === "choice") {
      input = el("select");
      input.append(new Option("—", ""), ...(f.schema.enum || []).map((o) => new Option(String(o), String(o))));
    } else {
      input = el("input");
      input.type = "text";
      input.placeholder = f.kind === "numbers" ? "numbers, comma-separated" : "a number";
    }
    input.dataset.field = f.name;
    input.dataset.kind = f.kind;
    input.className = "answer";
    input.addEventListener("keydown", reportKey);
    input.addEventListener(f.kind === "choice" ? "change" : "input", saveDraft);
    const kept = (readDraft().answers || {})[f.name];
    if (kept !== undefined && !game.finished) {
      input.value = Array.isArray(kept) ? kept.join(", ") : String(kept);
    }
    const label = el("td", `${f.name}: ${f.question} (${f.type})`);
    const cell = el("td");
    cell.append(input);
    tr.append(label, cell);
    return tr;
  }));
  $("answer-sheet").hidden = false;
}

function sheetAnswers() {
  const answers = {};
  for (const input of document.querySelectorAll("#answer-fields .answer")) {
    const text = input.value.trim();
    if (!text) continue;
    if (input.dataset.kind === "numbers") {
      const parts = text.split(/[,\s]+/).filter(Boolean).map(Number);
      answers[input.dataset.field] = parts.every((x) => Number.isFinite(x)) ? parts : text;
    } else if (input.dataset.kind === "number") {
      answers[input.dataset.field] = Number.isFinite(Number(text)) ? Number(text) : text;
    } else answers[input.dataset.field] = text;
  }
  return answers;
}

// The report and answer sheet being written are kept per game in localStorage until handed in:
// a reload, a closed tab or a New game the player cancels keeps them.
const readDraft = () => { try { return JSON.parse(localStorage.getItem(`draft.${game.id}`) || "{}"); } catch (e) { return {}; } };

function saveDraft() {
  if (!game || game.finished) return;
  localStorage.setItem(`draft.${game.id}`, JSON.stringify({ report: $("report").value, answers: sheetAnswers() }));
}

let handingIn = false;  // a double click (or ctrl+Enter twice) sends the report once

async function submitReport() {
  if (!game || handingIn) return;
  handingIn = true;
  $("submit-report").disabled = true;
  try {
    await stepQueue;  // steps pressed before the report come first
    game = await post(`/api/games/${game.id}/report`, { report: $("report").value, answers: sheetAnswers() });
    localStorage.removeItem(`draft.${game.id}`);
    render();
    $("report").blur();
    status("Report handed in; the game is over.");
  } catch (e) { status(e.message, true); }
  finally { handingIn = false; $("submit-report").disabled = Boolean(game && game.finished); }
}

function showKnowledge(k, target, sheet) {
  if (!k) { target.textContent = "no report"; return; }
  if (k.received !== undefined) {  // a sealed game's receipt: what was handed in, never a grade
    const fields = k.fields_submitted.length ? `answer sheet fields: ${k.fields_submitted.join(", ")}` : "no answer sheet fields";
    target.textContent = `${k.received ? "Handed in" : "Closed without a report"} and recorded (${fields}). ` +
      `Graded ${k.graded}.\n${k.report}`;
    return;
  }
  const grade = k.graded ? `knowledge score ${Number(k.score).toFixed(2)}` : "not graded";
  let text = `${grade}${k.error ? ` (judge error: ${k.error})` : ""}\n${k.report || ""}`;
  if (sheet && sheet.answers_score !== undefined && sheet.answers_score !== null) {
    const rows = ((sheet.answers_grade || {}).fields || []).map((f) => `${f.name}: ${f.correct ? "right" : "wrong"} (gold: ${JSON.stringify(f.gold)})`);
    text += `\nanswer sheet ${Number(sheet.answers_score).toFixed(2)}${rows.length ? "\n" + rows.join("\n") : ""}`;
  }
  target.textContent = text;
}

// ---- replay -------------------------------------------------------------------------------
let rp = null;
let rpTimer = null;
let replayReady = false;

async function initReplay() {
  if (!replayReady) {
    replayReady = true;
    $("rp-slider").addEventListener("input", () => showStep(Number($("rp-slider").value)));
    $("rp-prev").addEventListener("click", () => showStep(rpStep() - 1));
    $("rp-next").addEventListener("click", () => showStep(rpStep() + 1));
    $("rp-play").addEventListener("click", togglePlay);
    $("rp-grid").addEventListener("change", () => showStep(rpStep()));
    $("rp-show-scorecard").addEventListener("click", rpScorecard);
    $("log-select").addEventListener("change", () => openLog($("log-select").value));
  }
  try {
    const logs = await api("/api/logs");
    $("log-select").replaceChildren(new Option("— choose a log —", ""),
      ...logs.map((l) => new Option(l.sealed ? `${l.name} (sealed: the evaluator replays it)` : l.name, l.name)));
    const wanted = new URLSearchParams(location.search).get("log");
    if (wanted) { $("log-select").value = wanted; openLog(wanted); }
  } catch (e) { status(e.message, true); }
}

const rpStep = () => Number($("rp-slider").value);

async function openLog(name) {
  if (!name) return;
  try {
    status("re-simulating…");
    rp = await api(`/api/replay?log=${encodeURIComponent(name)}`);
    rp.name = name;
    history.replaceState(null, "", `/replay?log=${encodeURIComponent(name)}`);
    $("rp-slider").max = rp.frames - 1;
    const info = `${rp.agent} on ${rp.task} · ${rp.difficulty} · seed ${rp.seed} · ${rp.frames - 1} steps` + (rp.ended ? "" : " · unfinished") + (rp.diverged_at !== null ? ` · replay differs from the log from step ${rp.diverged_at}` : "");
    $("rp-info").textContent = info;
    showKnowledge(rp.knowledge, $("rp-knowledge"));
    drawChart();
    showStep(0);
    status("");
  } catch (e) { status(e.message, true); }
}

function describe(action) {
  if (action === null || action === undefined) return "(start)";
  if (typeof action !== "object") return String(action);
  if ("chosen_dialog_option_int" in action) return `choose option ${action.chosen_dialog_option_int}`;
  return ["action", "arg1", "arg2"].filter((k) => action[k] !== undefined && action[k] !== null).map((k) => action[k]).join(" ");
}

function showStep(i) {
  if (!rp) return;
  i = Math.max(0, Math.min(rp.frames - 1, i));
  $("rp-slider").value = i;
  const t = rp.timeline[i];
  $("rp-view").src = `/api/replay/frame.png?log=${encodeURIComponent(rp.name)}&step=${i}&grid=${$("rp-grid").checked}`;
  $("rp-step").textContent = `step ${i} / ${rp.frames - 1}` + (t.score === undefined ? "" : ` · score ${t.score.toFixed(2)}`);
  $("rp-action").textContent = t.label || describe(t.action);
  $("rp-message").textContent = t.message;
  $("rp-scorecard").replaceChildren();
  const marker = document.getElementById("rp-marker");
  if (marker) { const x = (300 * i) / Math.max(1, rp.frames - 1); marker.setAttribute("x1", x); marker.setAttribute("x2", x); }
  if (i >= rp.frames - 1 && rpTimer) togglePlay();
}

function drawChart() {
  const svg = $("rp-chart");
  const ns = "http://www.w3.org/2000/svg";
  const n = Math.max(1, rp.frames - 1);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", rp.timeline.map((t, i) => `${(300 * i) / n},${98 - 96 * (t.score || 0)}`).join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#6af");
  line.setAttribute("stroke-width", "2");
  line.setAttribute("vector-effect", "non-scaling-stroke");
  const marker = document.createElementNS(ns, "line");
  marker.id = "rp-marker";
  for (const [k, v] of [["y1", 0], ["y2", 100], ["stroke", "#fc6"], ["vector-effect", "non-scaling-stroke"]]) marker.setAttribute(k, v);
  svg.replaceChildren(line, marker);
}

function togglePlay() {
  if (rpTimer) { clearInterval(rpTimer); rpTimer = null; $("rp-play").textContent = "play"; return; }
  if (!rp) return;
  if (rpStep() >= rp.frames - 1) showStep(0);
  rpTimer = setInterval(() => showStep(rpStep() + 1), 500);
  $("rp-play").textContent = "pause";
}

function replayKey(ev) {
  if (ev.key === "ArrowRight") { ev.preventDefault(); showStep(rpStep() + 1); }
  if (ev.key === "ArrowLeft") { ev.preventDefault(); showStep(rpStep() - 1); }
  if (ev.key === " ") { ev.preventDefault(); togglePlay(); }
}

async function rpScorecard() {
  if (!rp) return;
  try { drawScorecard(await api(`/api/replay/scorecard?log=${encodeURIComponent(rp.name)}&step=${rpStep()}`), $("rp-scorecard")); } catch (e) { status(e.message, true); }
}

// ---- leaderboard --------------------------------------------------------------------------
// Per agent: procedure, completion, knowledge, the answer sheet (when any row has one), minutes
// of play (humans' games carry times) and n, as `discoverylab report` prints them.
const BOARD_FORMAT = {
  procedure: (v) => v.toFixed(2), completion: (v) => v.toFixed(2), knowledge: (v) => (v === null ? "not graded" : v.toFixed(2)),
  answers: (v) => (v === null ? "–" : v.toFixed(2)), minutes: (v) => (v === null ? "–" : v.toFixed(1)), n: (v) => String(v),
};

async function loadBoard() {
  try {
    const board = await api("/api/leaderboard");
    const table = $("board");
    const has = (agent, key) => board.rows.some((r) => r.cells[agent] && r.cells[agent][key] !== null && r.cells[agent][key] !== undefined);
    const metrics = {};
    for (const a of board.agents) {
      metrics[a] = ["procedure", "completion", "knowledge", ...["answers", "minutes"].filter((k) => has(a, k)), "n"];
    }
    const head1 = el("tr"); const head2 = el("tr");
    head1.append(el("th", ""), el("th", ""));
    head2.append(el("th", "task"), el("th", "difficulty"));
    for (const a of board.agents) {
      const th = el("th", a, "group"); th.colSpan = metrics[a].length; head1.append(th);
      head2.append(...metrics[a].map((m, i) => el("th", m, i === 0 ? "num first" : "num")));
    }
    const rows = board.rows.map((r) => {
      const tr = el("tr");
      tr.append(el("td", r.task), el("td", r.difficulty));
      for (const a of board.agents) {
        const c = r.cells[a];
        tr.append(...metrics[a].map((m, i) => el("td", c ? BOARD_FORMAT[m](c[m] === undefined ? null : c[m]) : "", i === 0 ? "num first" : "num")));
      }
      return tr;
    });
    if (!rows.length) { const tr = el("tr"); tr.append(el("td", "No finished runs in the logs folder yet.")); rows.push(tr); }
    table.replaceChildren(head1, head2, ...rows);
    $("board-sealed").hidden = !board.sealed_hidden;
    $("board-sealed").textContent = `Not shown: ${board.sealed_hidden} game(s) on sealed test instances; ` +
      "the evaluator scores them with `discoverylab report` on the logs folder.";
  } catch (e) { status(e.message, true); }
}

initPlay().then(showPage).catch((e) => status(e.message, true));
