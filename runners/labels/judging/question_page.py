"""The question mode's screen: a generated question, its source passage, accept / edit / reject and the grade.

Built like the grades page, in its frame (page.py page_shell: head, style, shared script): every text
reaches the page as JSON and goes on screen with ``textContent`` (the edit field's ``value``), never as HTML, under
the same nonce-only Content Security Policy; the screen moves on only once the server has acknowledged the review.
While the edit field is open, keys type into it (Enter saves, Escape cancels) and do not act as commands.
"""

from __future__ import annotations

from .page import COMMON_SCRIPT, STYLE, grade_buttons, page_shell

QUESTION_STYLE = """
#edit{display:none;width:100%;box-sizing:border-box;font:inherit;font-size:1.1rem;padding:.4rem;margin:.3rem 0}
body[data-editing='1'] #edit{display:block} #edited{color:#555;margin:.2rem 0} #edited:empty{display:none}
#nosource{color:#666;font-style:italic}
"""

QUESTION_SCRIPT = COMMON_SCRIPT + r"""
let state = null, cur = 0, busy = false, saved = 0, grade = null, item = null;
const WORD = {accept: 'accepted', edit: 'edited', reject: 'rejected'};
function showProgress(p) {
  $('bar').max = Math.max(1, p.total); $('bar').value = p.done;
  $('where').textContent = p.done + ' / ' + p.total + ' reviewed · ' + p.accept + ' accepted · ' + p.edit +
    ' edited · ' + p.reject + ' rejected';
  document.body.dataset.done = p.done;
}
function choose(g) {
  grade = g;
  document.querySelectorAll('#grades button').forEach(b => b.classList.toggle('chosen', String(g) === b.dataset.grade));
  document.body.dataset.grade = g === null ? '' : String(g);
}
function closeEdit() { document.body.dataset.editing = '0'; $('edit').blur(); }
async function show(i) {
  closeEdit();
  if (i >= state.progress.total) {
    cur = state.progress.total; item = null;  // ← shows the last question
    $('item').hidden = true; $('done').style.display = 'block'; document.body.dataset.index = 'done'; return;
  }
  cur = i;  // at once: a second ← before this answer goes one further back
  const it = await api('/api/item/' + i);
  if (cur !== i) return;  // a later key asked for another question meanwhile
  item = it; $('item').hidden = false; $('done').style.display = 'none';
  $('num').textContent = 'question ' + (i + 1) + ' of ' + state.progress.total;
  marked($('query'), item.query, []);
  const r = item.review;
  $('edited').textContent = r && r.action === 'edit' ? 'edited to: ' + r.text : '';
  $('nosource').hidden = item.has_source;
  marked($('title'), item.title, item.terms);
  marked($('text'), item.text, item.terms);
  choose(r && r.grade !== null && r.grade !== undefined ? r.grade : null);
  say(r ? ('already ' + WORD[r.action] + ' by ' + r.rater + (r.grade !== null && r.grade !== undefined ?
    ' (passage graded ' + r.grade + ')' : '')) : '');
  state.progress = item.progress || state.progress; showProgress(state.progress);
  document.body.dataset.index = String(i);
}
function openEdit() {
  if (!item || item.index !== cur) return;
  if (item.has_source && grade === null) { say('grade the source passage first (' + Object.keys(state.grades)
    .join('/') + '), then e', 'bad'); return; }
  const r = item.review;
  $('edit').value = r && r.action === 'edit' ? r.text : item.query;
  document.body.dataset.editing = '1'; $('edit').focus(); $('edit').select();
  say('edit the question: Enter saves, Escape cancels');
}
async function review(action) {
  if (busy || !item || item.index !== cur) return;  // nothing on screen, or another question on its way
  const body = {index: item.index, action: action, grade: item.has_source ? grade : null};
  if (action === 'edit') body.text = $('edit').value;
  busy = true; say('saving…');
  let ok = false;
  try {
    const r = await api('/api/review', body);
    ok = true; saved += 1;
    state.progress = r.progress; showProgress(r.progress);
    await show(r.next);
    const kinds = Object.keys(r.redacted || {});
    say('saved ✓ ' + WORD[r.action] + (kinds.length ? ' · personal data replaced: ' + kinds.join(', ') : ''), 'ok');
  } catch (e) {
    say((ok ? 'saved, but ' : 'NOT saved (') + e.message + (ok ? '' : ')'), 'bad');
  } finally {
    busy = false;
    if (ok) document.body.dataset.saved = String(saved);  // acknowledged by the server, next question on screen
  }
}
document.addEventListener('keydown', (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || !state) return;
  const k = ev.key;
  if (document.body.dataset.editing === '1') {
    if (k === 'Enter' && !ev.shiftKey) { ev.preventDefault(); review('edit'); }
    else if (k === 'Escape') { ev.preventDefault(); closeEdit(); say('edit cancelled'); }
    return;  // every other key types into the field
  }
  if (Object.hasOwn(state.grades, k)) {
    if (item && item.index === cur && item.has_source) { choose(Number(k)); say('passage graded ' + k + ': a accept · e edit · r reject'); }
  }
  else if (k === 'a') review('accept');
  else if (k === 'e') openEdit();
  else if (k === 'r') review('reject');
  else if (!moved(k)) return;
  ev.preventDefault();
});
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('button'); if (!b || !state) return;
  const a = b.dataset.action;
  if (a === 'grade' && item && item.has_source) choose(Number(b.dataset.grade));
  else if (a === 'accept' || a === 'reject') review(a);
  else if (a === 'edit') document.body.dataset.editing === '1' ? review('edit') : openEdit();
  else stepped(a);
});
(async () => {
  try { state = await api('/api/state'); showProgress(state.progress); await show(state.start); }
  catch (e) { say('cannot reach the judging server: ' + e.message, 'bad'); }
})();
"""


def question_page_html(nonce: str, title: str, rater: str, grades: dict[int, str]) -> str:
    """The question mode's page; `grades` highest first, each with its key."""
    main = f"""<main><section class="card" id="item"><div class="label" id="num"></div>
<div class="label">generated question</div><p id="query" dir="auto"></p><p id="edited" dir="auto"></p>
<textarea id="edit" dir="auto" rows="2" maxlength="2000" aria-label="the question, edited"></textarea>
<div class="label">its source passage</div><p id="nosource">no source passage recorded: accept, edit or reject
the question alone</p><h2 id="title" dir="auto"></h2><div id="text" dir="auto"></div></section>
<section class="card" id="done"><h2>All questions reviewed</h2><p>Every generated question has a review. Use
<kbd>←</kbd> to revisit one, or close this tab: everything is saved.</p></section>
<aside class="card"><div class="label">1. how relevant is the passage to the question?</div>
<div id="grades">{grade_buttons(grades)}</div><div class="label">2. the question</div><div id="actions">
<button data-action="accept"><kbd>a</kbd> accept: a real user could ask it</button>
<button data-action="edit"><kbd>e</kbd> edit, then <kbd>Enter</kbd></button>
<button data-action="reject"><kbd>r</kbd> reject: drop it</button>
<button data-action="prev"><kbd>←</kbd> previous</button><button data-action="next"><kbd>→</kbd> next</button>
</div><div id="status" role="status" aria-live="polite"></div>
<p class="label">each review is on disk before the next question shows</p></aside></main>"""
    return page_shell(nonce, f"verifying questions of {title} as {rater}", title, rater, STYLE + QUESTION_STYLE,
                      main, QUESTION_SCRIPT, body_attrs=' data-mode="questions" data-editing="0"')
