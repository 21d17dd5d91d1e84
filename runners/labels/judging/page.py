"""The judging screen: one HTML page with its script and style inline (under a nonce), no external resource.

Every text of the collection reaches the page as JSON and is put on screen with ``textContent`` (marks for
the question's words are built as elements around text nodes), never as HTML; so a document holding
``<script>`` or ``<img onerror=...>`` shows those characters and runs nothing. The grade definitions are
escaped into the page on the server. The page moves on only after the server has acknowledged a grade.

The frame of the page (head, style, the shared script, header; ``page_shell``) is the question mode's too
(question_page.py): one place keeps both screens' nonce-only style and script and their escaping the same.
"""

from __future__ import annotations

import html

STYLE = """
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1d1d1d}
header{display:flex;gap:1rem;align-items:center;padding:.6rem 1.2rem;background:#fff;border-bottom:1px solid #ddd}
header progress{flex:1;height:1rem} #where{white-space:nowrap;font-variant-numeric:tabular-nums}
main{display:grid;grid-template-columns:minmax(0,3fr) minmax(14rem,1fr);gap:1.2rem;padding:1.2rem;max-width:80rem}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:1rem 1.2rem}
#query{font-size:1.25rem;font-weight:600;margin:.2rem 0 0} #title{margin:0 0 .5rem;font-size:1.1rem}
#text{white-space:pre-wrap;overflow-wrap:anywhere;max-height:60vh;overflow:auto}
mark{background:#ffe58a;padding:0 1px} .label{color:#666;font-size:.8rem;text-transform:uppercase;letter-spacing:.05em}
kbd{border:1px solid #bbb;border-bottom-width:2px;border-radius:3px;padding:0 .35rem;background:#fafafa;font:600 .9rem monospace}
#grades button,#actions button{display:block;width:100%;text-align:left;margin:.3rem 0;padding:.45rem .6rem;
 border:1px solid #ccc;border-radius:4px;background:#fff;cursor:pointer;font:inherit}
#grades button.chosen{border-color:#2d6cdf;background:#e8f0fd} #status{min-height:1.5rem;margin-top:.6rem}
#status.bad{color:#b00020;font-weight:600} #status.ok{color:#1b7a2e} #done{display:none}
#verdicts{margin-top:1rem;font-size:.85rem} #verdicts li.settled{color:#1b7a2e}
"""

#: what both modes' pages share: the API call with the token, and the marking of the question's words
COMMON_SCRIPT = r"""
const token = new URLSearchParams(location.search).get('token') || '';
const $ = (id) => document.getElementById(id);
async function api(path, body) {
  const r = await fetch(path, {method: body ? 'POST' : 'GET', cache: 'no-store',
    headers: Object.assign({'X-Judging-Token': token}, body ? {'Content-Type': 'application/json'} : {}),
    body: body ? JSON.stringify(body) : undefined});
  const data = await r.json().catch(() => ({error: 'HTTP ' + r.status}));
  if (!r.ok) throw new Error(data.error || ('HTTP ' + r.status));
  return data;
}
// a term is marked as a whole word: not next to a letter, combining mark, digit or connector (the classes
// items.words() builds words of), in any script; in scripts written without spaces between words it is marked
// wherever it occurs, since there a word boundary is not a change of character class
const NOSPACE = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\p{sc=Tibetan}]/u;
function marked(el, text, terms) {
  el.replaceChildren();
  if (!terms.length) { el.textContent = text; return; }
  const esc = terms.map(t => {
    const e = t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return NOSPACE.test(t) ? e : '(?<![\\p{L}\\p{M}\\p{N}\\p{Pc}])' + e + '(?![\\p{L}\\p{M}\\p{N}\\p{Pc}])';
  });
  const parts = text.split(new RegExp('(' + esc.join('|') + ')', 'giu'));
  parts.forEach((p, i) => {
    if (i % 2) { const m = document.createElement('mark'); m.textContent = p; el.appendChild(m); }
    else if (p) el.appendChild(document.createTextNode(p));
  });
}
function say(text, cls) { $('status').textContent = text; $('status').className = cls || ''; }
// ← / p and → / n: the previous / next item (not while a save is on its way); false for any other key. Each mode
// declares its own state, cur, busy and show; these run only on a key or a click, once the mode's script has run
function moved(k) {
  if ((k === 'ArrowLeft' || k === 'p') && !busy && cur > 0) show(cur - 1);
  else if ((k === 'ArrowRight' || k === 'n') && !busy && cur < state.progress.total - 1) show(cur + 1);
  else return false;
  return true;
}
function stepped(a) {  // the previous / next buttons
  if (a === 'prev' && cur > 0) show(cur - 1);
  else if (a === 'next' && cur < state.progress.total - 1) show(cur + 1);
}
"""



SCRIPT = COMMON_SCRIPT + r"""
let state = null, cur = 0, busy = false, saved = 0, curKey = null;
function showVerdicts(v) {  // labels serve -c CONFIG: settled / open per pair of candidates (live_plan.py)
  if (!v) return;
  $('verdicts').hidden = false;
  const stop = v.length && v[0].stop ? [v[0].stop] : [];  // every verdict at the configured confidence
  $('pairs').replaceChildren(...v.map(p => {
    const li = document.createElement('li'); li.textContent = p.sentence;
    li.className = p.settled ? 'settled' : 'open'; return li;
  }), ...stop.map(t => { const li = document.createElement('li'); li.textContent = t; li.className = 'stop';
                         return li; }));
  document.body.dataset.settled = String(v.filter(p => p.settled).length);
  document.body.dataset.stop = String(stop.length > 0);
}
function minutes(s) { return s >= 3600 ? (s / 3600).toFixed(1) + ' h' : Math.max(1, Math.round(s / 60)) + ' min'; }
function showProgress(p) {
  $('bar').max = Math.max(1, p.total); $('bar').value = p.done;
  $('where').textContent = p.done + ' / ' + p.total + ' done' +
    (p.per_hour ? ' · ' + p.per_hour + ' per hour · about ' + minutes(p.eta_s) + ' left' : '');
  document.body.dataset.done = p.done;
}
async function show(i) {
  if (i >= state.progress.total) {
    $('item').hidden = true; $('done').style.display = 'block'; document.body.dataset.index = 'done'; return;
  }
  const it = await api('/api/item/' + i);
  cur = i; curKey = it.key; $('item').hidden = false; $('done').style.display = 'none';
  $('num').textContent = 'item ' + (i + 1) + ' of ' + state.progress.total;
  marked($('query'), it.query, []);
  marked($('title'), it.title, it.terms);
  marked($('text'), it.text, it.terms);
  document.querySelectorAll('#grades button').forEach(b =>
    b.classList.toggle('chosen', it.status === 'graded' && String(it.grade) === b.dataset.grade));
  say(it.status ? ('already ' + (it.status === 'graded' ? 'graded ' + it.grade : it.status)) : '');
  state.progress = it.progress; showProgress(it.progress);
  document.body.dataset.index = String(i); document.body.dataset.key = it.key.join('/');
}
async function judge(grade, status) {
  if (busy || cur >= state.progress.total) return;
  busy = true; say('saving…');
  let ok = false;
  try {
    const r = await api('/api/judge', {index: cur, key: curKey, grade: grade, status: status});
    ok = true; saved += 1;
    state.progress = r.progress; showProgress(r.progress); showVerdicts(r.verdicts);
    await show(r.next);
    say('saved ✓ ' + (status === 'graded' ? 'grade ' + grade : status), 'ok');
  } catch (e) {
    if (!ok && /order changed/.test(e.message)) {  // re-planned meanwhile (another tab): show what is here now
      try { await show(cur); } catch (e2) { /* the message below stands */ }
      say('NOT saved: the order was re-planned and another pair is at this place now; grade this one', 'bad');
      return;
    }
    say((ok ? 'saved, but ' : 'NOT saved (') + e.message + (ok ? '' : '): press the key again'), 'bad');
  } finally {
    busy = false;
    if (ok) document.body.dataset.saved = String(saved);  // acknowledged by the server, next item on screen
  }
}
document.addEventListener('keydown', (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || !state) return;
  const k = ev.key;
  if (Object.hasOwn(state.grades, k)) judge(Number(k), 'graded');
  else if (k === 's') judge(null, 'skip');
  else if (k === 'u') judge(null, 'unsure');
  else if (!moved(k)) return;
  ev.preventDefault();
});
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('button'); if (!b || !state) return;
  const a = b.dataset.action;
  if (a === 'grade') judge(Number(b.dataset.grade), 'graded');
  else if (a === 'skip' || a === 'unsure') judge(null, a);
  else stepped(a);
});
(async () => {
  try { state = await api('/api/state'); showProgress(state.progress); showVerdicts(state.verdicts);
        await show(state.start); }
  catch (e) { say('cannot reach the judging server: ' + e.message, 'bad'); }
})();
"""


def grade_buttons(grades: dict[int, str]) -> str:
    """One button per grade, highest first, its key shown; the meanings are escaped."""
    e = html.escape
    return "".join(f'<button data-action="grade" data-grade="{int(g)}"><kbd>{int(g)}</kbd> {e(meaning)}</button>'
                   for g, meaning in sorted(grades.items(), reverse=True))


def page_shell(nonce: str, head_title: str, title: str, rater: str, style: str, main: str, script: str,
               body_attrs: str = "") -> str:
    """The page around a screen's ``main`` (its markup, built by the caller with names escaped): head, header with
    the task, the rater and the progress bar, ``style`` and ``script`` under ``nonce``. ``head_title``, ``title``
    and ``rater`` are escaped here; ``body_attrs`` is the caller's fixed attribute text (no data)."""
    e = html.escape
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>{e(head_title)}</title>
<style nonce="{nonce}">{style}</style></head>
<body{body_attrs}><header><strong>{e(title)}</strong><span>rater {e(rater)}</span>
<progress id="bar" value="0" max="1"></progress><span id="where"></span></header>
{main}
<script nonce="{nonce}">{script}</script></body></html>"""


def page_html(nonce: str, title: str, rater: str, grades: dict[int, str]) -> str:
    """The page; `grades` highest first, each with its key."""
    main = f"""<main><section class="card" id="item"><div class="label" id="num"></div>
<div class="label">question</div><p id="query" dir="auto"></p>
<div class="label">document</div><h2 id="title" dir="auto"></h2><div id="text" dir="auto"></div></section>
<section class="card" id="done"><h2>All items judged</h2><p>Every item of your share has a judgment. Use
<kbd>←</kbd> to revisit one, or close this tab: everything is saved.</p></section>
<aside class="card"><div class="label">how relevant is the document to the question?</div>
<div id="grades">{grade_buttons(grades)}</div><div id="actions">
<button data-action="skip"><kbd>s</kbd> skip</button><button data-action="unsure"><kbd>u</kbd> unsure</button>
<button data-action="prev"><kbd>←</kbd> previous</button><button data-action="next"><kbd>→</kbd> next</button>
</div><div id="status" role="status" aria-live="polite"></div>
<p class="label">each judgment is on disk before the next item shows</p>
<details id="verdicts" hidden><summary class="label">verdicts: settled or open</summary>
<p>whatever the pairs nobody graded yet turn out to be (no item shows which candidate found it)</p>
<ul id="pairs"></ul></details></aside></main>"""
    return page_shell(nonce, f"judging {title} as {rater}", title, rater, STYLE, main, SCRIPT)
