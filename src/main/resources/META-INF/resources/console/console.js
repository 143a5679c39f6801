'use strict';
// Baton's operator console. Every action is a call of the public API with the key the operator
// typed: the console has no access of its own. Everything from the API is put on the page as text
// (textContent, text nodes), never as markup, so a payload such as "<script>" shows as those
// characters.
//
// Under failure: only a 401 (a wrong key, or one no longer accepted) forgets the key. A 503 (Redis
// down), any other 5xx or a network error keeps the key and the views last shown, dimmed and marked
// with the time Baton last answered them, under a banner that says what failed; the refresh goes on,
// and the page is live again as soon as Baton answers.
(() => {
  const STORE = 'baton.console.key'; // sessionStorage: this tab only, gone when it closes
  const ROLE = 'baton.console.role'; // 'admin' or 'worker', as Baton last answered for the key
  const VIEWS = 'baton.console.views'; // the last good views: a reload during an outage still shows them
  const REFRESH_MS = 3000;
  const LIMIT = 100;
  const NOTICES_KEPT = 5;
  const ID_BREAKS = '._:@-'; // the punctuation of the lcid and requestId alphabet: wrap after it
  const PAYLOAD_BREAKS = ',:._@-/';
  const REFUSED = 'That key was refused (401 Unauthorized). Check it and try again.';
  const PARTS = { busy: 'busy lcids', dead: 'dead letters', detail: 'the lcid', key: 'the key check' };
  const $ = (id) => document.getElementById(id);

  let key = sessionStorage.getItem(STORE);
  let role = sessionStorage.getItem(ROLE); // null until Baton answered a probe with 200 or 403
  let checked = false; // the role was probed since the page loaded
  let views = readViews(); // { good, down, busy, dead, detail }: what Baton last answered, and when
  let failures = {}; // part -> { since, text }, while its calls fail
  let updated = null; // the last refresh of this page in which every call answered
  let openLcid = null;
  let session = 0; // a new key (or none) makes the answers to the old one's calls stale
  let timer = null;
  let running = false;
  let again = false;

  // --- calls -----------------------------------------------------------------------------------

  /** Never throws: a network failure is status 0 with its message. */
  async function api(method, path) {
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: { Authorization: 'Bearer ' + key, Accept: 'application/json' },
        cache: 'no-store',
      });
    } catch (e) {
      return { status: 0, body: null, failure: 'Baton cannot be reached (' + e.message + ')' };
    }
    let body = null;
    try {
      const text = await response.text();
      if (text) body = JSON.parse(text);
    } catch (e) {
      body = null; // not JSON: a proxy's error page, or a body cut short
    }
    return { status: response.status, statusText: response.statusText, body };
  }

  const segment = (value) => encodeURIComponent(value);

  function problemText(answer) {
    if (answer.status === 0) return answer.failure;
    const body = answer.body && typeof answer.body === 'object' ? answer.body : {};
    const title = body.title || answer.statusText;
    return 'Baton answered ' + answer.status + (title ? ' ' + title : '') + (body.code ? ' (' + body.code + ')' : '')
      + (body.detail ? ': ' + body.detail : '');
  }

  /**
   * Whether a part's call answered 200. If not, a 401 forgets the key; anything else marks the
   * part failing (its view stays, marked stale) until one of its calls answers again.
   */
  function answered(part, answer) {
    if (answer.status === 200) {
      delete failures[part];
      return true;
    }
    if (answer.status === 401) {
      refused();
      return false;
    }
    // views.down: when the outage began, as this tab saw it, also before a reload
    const since = failures[part] ? failures[part].since : views.down || Date.now();
    failures[part] = { since, text: problemText(answer) };
    return false;
  }

  // --- formatting ------------------------------------------------------------------------------

  function duration(ms) {
    if (ms === undefined || ms === null) return '';
    if (ms < 1000) return ms + ' ms';
    const s = ms / 1000;
    if (s < 120) return s.toFixed(1) + ' s';
    const m = s / 60;
    if (m < 120) return m.toFixed(1) + ' min';
    return (m / 60).toFixed(1) + ' h';
  }

  const clock = (ms) => new Date(ms).toLocaleTimeString();

  /**
   * Puts text into an element with a line-break opportunity (<wbr>) after each of `breaks`, so
   * that a long id wraps at its separators and an ordinary word never in its middle.
   */
  function breakable(element, text, breaks) {
    let start = 0;
    for (let i = 0; i < text.length - 1; i++) {
      if (breaks.includes(text[i])) {
        element.append(text.slice(start, i + 1), document.createElement('wbr'));
        start = i + 1;
      }
    }
    element.append(text.slice(start));
    return element;
  }

  function cell(row, value, className) {
    const td = row.insertCell();
    td.textContent = value === undefined || value === null ? '' : String(value);
    if (className) td.className = className;
    return td;
  }

  function idCell(row, value) {
    const td = row.insertCell();
    td.className = 'id';
    if (value !== undefined && value !== null) breakable(td, String(value), ID_BREAKS);
    return td;
  }

  /** An lcid as a link to its detail: the same #lcid=... a deep link uses. */
  function lcidCell(row, lcid) {
    const td = row.insertCell();
    td.className = 'id';
    const link = document.createElement('a');
    link.href = hashFor(lcid);
    breakable(link, lcid, ID_BREAKS);
    td.append(link);
    return td;
  }

  function payloadCell(row, payload) {
    const td = row.insertCell();
    td.className = 'payload';
    if (payload !== undefined) breakable(td, JSON.stringify(payload), PAYLOAD_BREAKS);
    return td;
  }

  /** The one row of a table with nothing to list: why it is empty, or that nothing came yet. */
  function onlyRow(body, columns, text, className) {
    const row = body.insertRow();
    row.className = className;
    const td = row.insertCell();
    td.colSpan = columns;
    td.textContent = text;
  }

  // --- key -------------------------------------------------------------------------------------

  function setRole(status) {
    role = status === 200 ? 'admin' : 'worker';
    checked = true;
    sessionStorage.setItem(ROLE, role);
    delete failures.key;
    showRole();
  }

  /** The busy list needs an admin key; a worker key gets 403 there and may still read locks. */
  async function probe(mine) {
    const answer = await api('GET', '/v1/busy-locks?limit=1');
    if (mine !== session) return;
    if (answer.status === 200 || answer.status === 403) {
      setRole(answer.status);
    } else {
      answered('key', answer);
    }
  }

  async function login(candidate) {
    const mine = ++session;
    key = candidate;
    const answer = await api('GET', '/v1/busy-locks?limit=1');
    if (mine !== session) return;
    if (answer.status === 401) {
      key = null;
      $('login-error').textContent = REFUSED;
      return;
    }
    // Anything but a 401 keeps the key: with a 503 or no answer it is checked on each refresh.
    sessionStorage.setItem(STORE, key);
    if (answer.status === 200 || answer.status === 403) {
      setRole(answer.status);
    } else {
      answered('key', answer);
    }
    showApp();
  }

  function refused() {
    forget();
    $('login-error').textContent = REFUSED;
  }

  function forget() {
    session++;
    clearTimeout(timer);
    timer = null;
    sessionStorage.removeItem(STORE);
    sessionStorage.removeItem(ROLE);
    sessionStorage.removeItem(VIEWS);
    key = null;
    role = null;
    checked = false;
    views = {};
    failures = {};
    updated = null;
    openLcid = null;
    $('app').hidden = true;
    $('forget').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = '';
    $('who').textContent = '';
    $('key').value = '';
    $('notices').replaceChildren();
  }

  function showRole() {
    $('who').textContent = role === 'admin' ? 'admin key'
      : role === 'worker' ? 'worker key: locks only, no operator actions' : 'key not checked yet';
    for (const element of document.querySelectorAll('.admin-only')) element.hidden = role !== 'admin';
  }

  function showApp() {
    $('login').hidden = true;
    $('app').hidden = false;
    $('forget').hidden = false;
    showRole();
    if (views.busy) $('busy-order').value = views.busy.order;
    const lcid = hashLcid();
    openLcid = lcid;
    if (!lcid || (views.detail && views.detail.lcid !== lcid)) views.detail = null;
    if (lcid) $('lookup-lcid').value = lcid;
    renderBusy();
    renderDead();
    renderDetail();
    showHealth();
    refresh();
  }

  // --- the last good views ---------------------------------------------------------------------

  function readViews() {
    try {
      return JSON.parse(sessionStorage.getItem(VIEWS)) || {};
    } catch (e) {
      return {};
    }
  }

  function saveViews() {
    if (!key) return;
    try {
      sessionStorage.setItem(VIEWS, JSON.stringify(views));
    } catch (e) {
      // full: the views are kept only so that a reload shows them at once
    }
  }

  // --- refresh ---------------------------------------------------------------------------------

  async function refresh() {
    clearTimeout(timer);
    timer = null;
    if (!key) return;
    if (running) {
      again = true; // once the refresh in flight is done
      return;
    }
    running = true;
    again = false;
    const mine = session;
    try {
      if (!checked) await probe(mine);
      if (mine !== session || role === null) return;
      const work = [];
      if (role === 'admin') work.push(loadBusy(mine), loadDead(mine));
      if (openLcid) work.push(loadDetail(openLcid, mine));
      await Promise.all(work);
      if (mine !== session) return;
      if (Object.keys(failures).length === 0) {
        updated = Date.now();
        views.good = updated;
        delete views.down;
        saveViews();
      }
    } finally {
      running = false;
      if (mine === session) showHealth();
      clearTimeout(timer);
      timer = key ? setTimeout(refresh, again ? 0 : REFRESH_MS) : null;
    }
  }

  /** The status line, the banner (what fails, since when) and the stale marks of the sections. */
  function showHealth() {
    const failing = Object.entries(failures);
    const banner = $('banner');
    if (failing.length === 0) {
      banner.hidden = true;
      banner.textContent = '';
      $('status').textContent = updated ? 'Updated ' + clock(updated) + '.' : 'Loading\u2026';
    } else {
      const since = Math.min(...failing.map(([, failure]) => failure.since));
      if (views.down !== since) {
        views.down = since;
        saveViews();
      }
      const texts = [...new Set(failing.map(([, failure]) => failure.text))];
      const what = texts.length === 1 ? texts[0]
        : failing.map(([part, failure]) => PARTS[part] + ': ' + failure.text).join('; ');
      const shown = views.good
        ? 'What is shown dimmed is from the last good update, at ' + clock(views.good) + ', and may be out of date.'
        : 'Nothing was read yet.';
      banner.textContent = 'Not live since ' + clock(since) + '. ' + what + '. ' + shown
        + ' Retrying every ' + REFRESH_MS / 1000 + ' s.';
      banner.hidden = false;
      $('status').textContent = views.good
        ? 'Last good update ' + clock(views.good) + ' (' + duration(Date.now() - views.good) + ' ago).'
        : 'No answer from Baton yet.';
    }
    markStale('busy', $('busy-section'));
    markStale('dead', $('dead-section'));
    markStale('detail', $('detail'));
  }

  function markStale(part, section) {
    const stale = Boolean(views[part] && failures[part]);
    section.classList.toggle('stale', stale);
    section.querySelector('.stale-note').textContent = stale ? 'not live: as of ' + clock(views[part].at) : '';
    for (const button of section.querySelectorAll('button.retry')) button.disabled = stale;
  }

  // --- busy lcids ------------------------------------------------------------------------------

  async function loadBusy(mine) {
    const order = $('busy-order').value;
    const answer = await api('GET', '/v1/busy-locks?limit=' + LIMIT + '&order=' + segment(order));
    if (mine !== session || order !== $('busy-order').value) return;
    if (answered('busy', answer)) {
      views.busy = { at: Date.now(), order, body: answer.body };
      saveViews();
      renderBusy();
    }
    showHealth();
  }

  function renderBusy() {
    const body = $('busy').tBodies[0];
    body.replaceChildren();
    const view = views.busy;
    if (!view) {
      onlyRow(body, 6, 'Not read yet.', 'none');
      $('busy-count').textContent = '';
      return;
    }
    const items = view.body.items;
    for (const lock of items) {
      const row = body.insertRow();
      row.className = 'pick';
      row.dataset.lcid = lock.lcid;
      row.addEventListener('click', (event) => {
        if (!event.target.closest('a')) openDetail(lock.lcid);
      });
      lcidCell(row, lock.lcid);
      if (lock.held) {
        idCell(row, (lock.activeRequestIds || [lock.activeRequestId]).join(', '));
      } else {
        cell(row, 'no live holder', 'none');
      }
      cell(row, duration(lock.heldForMs));
      cell(row, lock.held ? duration(lock.leaseRemainingMs) : '');
      cell(row, lock.fence);
      cell(row, lock.queueLength);
    }
    if (items.length === 0) onlyRow(body, 6, 'No busy lcids: no lock is held and nothing is queued.', 'empty');
    // busyCount is the index's hint, not the number of rows: the index may still list an lcid that
    // turned idle a moment ago, and such entries are dropped from the page.
    const hint = view.body.busyCount;
    const count = $('busy-count');
    count.title = 'Rows shown, and busyCount: how many busy lcids the index lists (a hint, which may still count lcids just turned idle).';
    if (items.length === 0 && hint === 0) {
      count.textContent = '';
    } else if (hint === items.length) {
      count.textContent = items.length + ' shown';
    } else {
      count.textContent = (items.length === LIMIT ? 'first ' : '') + items.length + ' shown (the index lists about '
        + hint + ')';
    }
  }

  // --- dead letters ----------------------------------------------------------------------------

  async function loadDead(mine) {
    const answer = await api('GET', '/v1/dead-letters?limit=' + LIMIT);
    if (mine !== session) return;
    if (answered('dead', answer)) {
      views.dead = { at: Date.now(), body: answer.body };
      saveViews();
      renderDead();
    }
    showHealth();
  }

  function renderDead() {
    const body = $('dead').tBodies[0];
    body.replaceChildren();
    const view = views.dead;
    if (!view) {
      onlyRow(body, 7, 'Not read yet.', 'none');
      $('dead-count').textContent = '';
      return;
    }
    const items = view.body.items;
    for (const letter of items) {
      const row = body.insertRow();
      row.dataset.lcid = letter.lcid;
      row.dataset.requestId = letter.requestId;
      lcidCell(row, letter.lcid);
      idCell(row, letter.requestId);
      cell(row, letter.attempts);
      cell(row, letter.reason);
      cell(row, new Date(letter.diedAt).toLocaleString());
      payloadCell(row, letter.payload);
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'retry';
      button.textContent = 'Retry';
      button.addEventListener('click', () => retry(letter.lcid, letter.requestId));
      row.insertCell().append(button);
    }
    if (items.length === 0) onlyRow(body, 7, 'No dead letters.', 'empty');
    $('dead-count').textContent = items.length === 0 ? '' : (items.length === LIMIT ? 'newest ' : '') + items.length + ' shown';
  }

  async function retry(lcid, requestId) {
    if (!window.confirm('Queue request ' + requestId + ' of ' + lcid + ' again, with a fresh attempt budget?')) return;
    const mine = session;
    const answer = await api('POST', '/v1/locks/' + segment(lcid) + '/requests/' + segment(requestId) + '/retry');
    if (mine !== session) return;
    if (answer.status === 401) return refused();
    if (answer.status === 202) {
      notice(requestId + ' of ' + lcid + ' is queued again, at position ' + answer.body.position + '.');
    } else {
      notice('Retry of ' + requestId + ' of ' + lcid + ' failed. ' + problemText(answer), true);
    }
    refresh();
  }

  /** A message that stays until dismissed (the refresh never clears it); the newest few are kept. */
  function notice(text, error) {
    const item = document.createElement('li');
    item.className = error ? 'error' : 'done';
    const when = document.createElement('span');
    when.className = 'when';
    when.textContent = clock(Date.now());
    const what = document.createElement('span');
    what.className = 'text';
    what.textContent = text;
    const dismiss = document.createElement('button');
    dismiss.type = 'button';
    dismiss.className = 'dismiss';
    dismiss.textContent = 'Dismiss';
    dismiss.addEventListener('click', () => item.remove());
    item.append(when, what, dismiss);
    const list = $('notices');
    list.prepend(item);
    while (list.children.length > NOTICES_KEPT) list.lastElementChild.remove();
  }

  // --- an lcid ---------------------------------------------------------------------------------

  // The open lcid is in the address, #lcid=..., so that it can be linked to and back and forward
  // move between lcids. Only the lcid: never the key.
  const hashFor = (lcid) => '#lcid=' + encodeURIComponent(lcid);

  function hashLcid() {
    const match = /^#lcid=(.+)$/.exec(location.hash);
    if (!match) return null;
    try {
      return decodeURIComponent(match[1]);
    } catch (e) {
      return match[1];
    }
  }

  /** Opens an lcid by moving to its address; the hashchange shows it. */
  function openDetail(lcid) {
    if (location.hash === hashFor(lcid)) {
      showLcid(lcid);
    } else {
      location.hash = hashFor(lcid);
    }
  }

  function showLcid(lcid) {
    const input = $('lookup-lcid');
    input.value = lcid;
    input.removeAttribute('aria-invalid');
    $('lookup-error').textContent = '';
    if (openLcid !== lcid) {
      openLcid = lcid;
      delete failures.detail;
      if (views.detail && views.detail.lcid !== lcid) views.detail = null;
    }
    renderDetail();
    showHealth();
    return loadDetail(lcid, session);
  }

  function closeDetail() {
    openLcid = null;
    views.detail = null;
    delete failures.detail;
    saveViews();
    renderDetail();
    showHealth();
  }

  async function loadDetail(lcid, mine) {
    const lock = await api('GET', '/v1/locks/' + segment(lcid));
    if (mine !== session || openLcid !== lcid) return;
    if (lock.status === 400 || lock.status === 404) return notAnLcid(lcid, lock);
    if (!answered('detail', lock)) return showHealth();
    let queue = null;
    if (role === 'admin') {
      const answer = await api('GET', '/v1/locks/' + segment(lcid) + '/queue?limit=' + LIMIT + '&payload=true');
      if (mine !== session || openLcid !== lcid) return;
      if (!answered('detail', answer)) return showHealth();
      queue = answer.body;
    }
    views.detail = { at: Date.now(), lcid, lock: lock.body, queue };
    saveViews();
    renderDetail();
    showHealth();
  }

  /** Said where the lcid was typed; the panel closes, so that it shows no other lcid meanwhile. */
  function notAnLcid(lcid, answer) {
    closeDetail();
    const input = $('lookup-lcid');
    input.value = lcid;
    input.setAttribute('aria-invalid', 'true');
    const detail = answer.body && answer.body.detail;
    $('lookup-error').textContent = answer.status === 400
      ? '\u201c' + lcid + '\u201d is not an lcid (' + (detail || problemText(answer)) + ')'
      : problemText(answer);
  }

  function renderDetail() {
    const panel = $('detail');
    panel.hidden = openLcid === null;
    if (openLcid === null) return;
    $('detail-lcid').replaceChildren();
    breakable($('detail-lcid'), openLcid, ID_BREAKS);
    const list = $('lock');
    list.replaceChildren();
    const queueBody = $('queue').tBodies[0];
    queueBody.replaceChildren();
    const view = views.detail && views.detail.lcid === openLcid ? views.detail : null;
    if (!view) {
      const dd = document.createElement('dd');
      dd.className = 'none';
      dd.textContent = 'Not read yet.';
      list.append(document.createElement('dt'), dd);
      onlyRow(queueBody, 8, 'Not read yet.', 'none');
      $('queue-length').textContent = '';
      return;
    }
    const lock = view.lock;
    const facts = [
      ['held', lock.held ? 'yes' : 'no'],
      ['holder\u2019s requests', lock.held ? (lock.activeRequestIds || [lock.activeRequestId]).join(', ') : ''],
      ['held for', duration(lock.heldForMs)],
      ['lease left', lock.held ? duration(lock.leaseRemainingMs) : ''],
      ['fence', lock.fence],
      ['queue length', lock.queueLength],
    ];
    for (const [name, value] of facts) {
      const dt = document.createElement('dt');
      dt.textContent = name;
      const dd = document.createElement('dd');
      dd.textContent = value === undefined || value === null ? '' : String(value);
      list.append(dt, dd);
    }
    if (!view.queue) return;
    const queue = view.queue;
    for (const request of queue.items) {
      const row = queueBody.insertRow();
      row.dataset.requestId = request.requestId;
      cell(row, request.position);
      idCell(row, request.requestId);
      cell(row, request.state);
      cell(row, request.attempt);
      cell(row, request.mode);
      cell(row, duration(request.queuedForMs));
      cell(row, request.reason);
      payloadCell(row, request.payload);
    }
    if (queue.items.length === 0) onlyRow(queueBody, 8, 'Nothing queued.', 'empty');
    $('queue-length').textContent = '(' + queue.queueLength + ' queued'
      + (queue.items.length < queue.queueLength ? ', first ' + queue.items.length + ' shown' : '') + ')';
  }

  // --- wiring ----------------------------------------------------------------------------------

  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    $('login-error').textContent = '';
    login($('key').value.trim());
  });
  $('forget').addEventListener('click', forget);
  $('lookup').addEventListener('submit', (event) => {
    event.preventDefault();
    const lcid = $('lookup-lcid').value.trim();
    if (lcid) openDetail(lcid);
  });
  $('close-detail').addEventListener('click', () => {
    history.pushState(null, '', location.pathname + location.search);
    closeDetail();
  });
  window.addEventListener('hashchange', () => {
    if (!key) return; // shown once the key is accepted
    const lcid = hashLcid();
    if (lcid) {
      showLcid(lcid);
    } else {
      closeDetail();
    }
  });
  $('busy-order').addEventListener('change', () => loadBusy(session));

  if (key) showApp();
})();
