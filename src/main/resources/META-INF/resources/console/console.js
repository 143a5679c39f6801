'use strict';
// Baton's operator console. Every action is a call of the public API with the key the operator
// typed: the console has no access of its own. Everything from the API is put on the page as text
// (textContent), never as markup, so a payload such as "<script>" shows as those characters.
(() => {
  const STORE = 'baton.console.key'; // sessionStorage: this tab only, gone when it closes
  const REFRESH_MS = 3000;
  const $ = (id) => document.getElementById(id);

  let key = sessionStorage.getItem(STORE);
  let admin = false;
  let openLcid = null;
  let timer = null;

  async function api(method, path) {
    const response = await fetch(path, {
      method,
      headers: { Authorization: 'Bearer ' + key, Accept: 'application/json' },
      cache: 'no-store',
    });
    const text = await response.text();
    let body = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch (e) {
        body = null;
      }
    }
    return { status: response.status, body };
  }

  const segment = (value) => encodeURIComponent(value);

  function duration(ms) {
    if (ms === undefined || ms === null) return '';
    if (ms < 1000) return ms + ' ms';
    const s = ms / 1000;
    if (s < 120) return s.toFixed(1) + ' s';
    const m = s / 60;
    if (m < 120) return m.toFixed(1) + ' min';
    return (m / 60).toFixed(1) + ' h';
  }

  function cell(row, value, className) {
    const td = row.insertCell();
    td.textContent = value === undefined || value === null ? '' : String(value);
    if (className) td.className = className;
    return td;
  }

  function payloadText(payload) {
    return payload === undefined ? '' : JSON.stringify(payload);
  }

  function problemText(answer) {
    const body = answer.body || {};
    return 'Baton answered ' + answer.status + (body.detail ? ': ' + body.detail : '');
  }

  function say(text, error) {
    $('status').textContent = text;
    $('status').className = error ? 'error' : '';
  }

  // --- key -------------------------------------------------------------------------------------

  async function open(candidate) {
    key = candidate;
    // The busy list needs an admin key; a worker key gets 403 there and may still read locks.
    const probe = await api('GET', '/v1/busy-locks?limit=1');
    if (probe.status === 401) {
      key = null;
      return 'That key was refused (401 Unauthorized). Check it and try again.';
    }
    if (probe.status !== 200 && probe.status !== 403) {
      key = null;
      return problemText(probe);
    }
    admin = probe.status === 200;
    sessionStorage.setItem(STORE, key);
    showApp();
    return null;
  }

  function showApp() {
    $('login').hidden = true;
    $('app').hidden = false;
    $('forget').hidden = false;
    $('who').textContent = admin ? 'admin key' : 'worker key: locks only, no operator actions';
    for (const element of document.querySelectorAll('.admin-only')) element.hidden = !admin;
    refresh();
    clearInterval(timer);
    timer = setInterval(refresh, REFRESH_MS);
  }

  function forget() {
    clearInterval(timer);
    sessionStorage.removeItem(STORE);
    key = null;
    admin = false;
    openLcid = null;
    $('app').hidden = true;
    $('forget').hidden = true;
    $('login').hidden = false;
    $('who').textContent = '';
    $('key').value = '';
  }

  // --- views -----------------------------------------------------------------------------------

  async function refresh() {
    try {
      const work = [];
      if (admin) work.push(showBusy(), showDead());
      if (openLcid) work.push(showDetail(openLcid));
      await Promise.all(work);
    } catch (e) {
      say('Baton cannot be reached: ' + e.message, true);
    }
  }

  async function showBusy() {
    const answer = await api('GET', '/v1/busy-locks?limit=100&order=' + segment($('busy-order').value));
    if (answer.status !== 200) return say(problemText(answer), true);
    const body = $('busy').tBodies[0];
    body.replaceChildren();
    for (const lock of answer.body.items) {
      const row = body.insertRow();
      row.className = 'pick';
      row.dataset.lcid = lock.lcid;
      row.addEventListener('click', () => openDetail(lock.lcid));
      cell(row, lock.lcid);
      cell(row, lock.held ? (lock.activeRequestIds || [lock.activeRequestId]).join(', ') : 'no live holder',
        lock.held ? '' : 'none');
      cell(row, duration(lock.heldForMs));
      cell(row, lock.held ? duration(lock.leaseRemainingMs) : '');
      cell(row, lock.fence);
      cell(row, lock.queueLength);
    }
    say('Updated ' + new Date().toLocaleTimeString() + ': ' + answer.body.busyCount + ' busy lcids.');
  }

  async function showDetail(lcid) {
    const lock = await api('GET', '/v1/locks/' + segment(lcid));
    if (lock.status !== 200) return say(problemText(lock), true);
    $('detail-lcid').textContent = lcid;
    const view = lock.body;
    const facts = [
      ['held', view.held ? 'yes' : 'no'],
      ['holder\u2019s requests', view.held ? (view.activeRequestIds || [view.activeRequestId]).join(', ') : ''],
      ['held for', duration(view.heldForMs)],
      ['lease left', view.held ? duration(view.leaseRemainingMs) : ''],
      ['fence', view.fence],
      ['queue length', view.queueLength],
    ];
    const list = $('lock');
    list.replaceChildren();
    for (const [name, value] of facts) {
      const dt = document.createElement('dt');
      dt.textContent = name;
      const dd = document.createElement('dd');
      dd.textContent = value === undefined || value === null ? '' : String(value);
      list.append(dt, dd);
    }
    $('detail').hidden = false;
    if (!admin) return;
    const queue = await api('GET', '/v1/locks/' + segment(lcid) + '/queue?limit=100&payload=true');
    if (queue.status !== 200) return say(problemText(queue), true);
    $('queue-length').textContent = queue.body.queueLength + ' queued';
    const body = $('queue').tBodies[0];
    body.replaceChildren();
    for (const request of queue.body.items) {
      const row = body.insertRow();
      row.dataset.requestId = request.requestId;
      cell(row, request.position);
      cell(row, request.requestId);
      cell(row, request.state);
      cell(row, request.attempt);
      cell(row, request.mode);
      cell(row, duration(request.queuedForMs));
      cell(row, request.reason);
      cell(row, payloadText(request.payload), 'payload');
    }
  }

  async function showDead() {
    const answer = await api('GET', '/v1/dead-letters?limit=100');
    if (answer.status !== 200) return say(problemText(answer), true);
    const body = $('dead').tBodies[0];
    body.replaceChildren();
    for (const letter of answer.body.items) {
      const row = body.insertRow();
      row.dataset.lcid = letter.lcid;
      row.dataset.requestId = letter.requestId;
      cell(row, letter.lcid);
      cell(row, letter.requestId);
      cell(row, letter.attempts);
      cell(row, letter.reason);
      cell(row, new Date(letter.diedAt).toLocaleString());
      cell(row, payloadText(letter.payload), 'payload');
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'retry';
      button.textContent = 'Retry';
      button.addEventListener('click', () => retry(letter.lcid, letter.requestId));
      row.insertCell().append(button);
    }
  }

  function openDetail(lcid) {
    openLcid = lcid;
    showDetail(lcid).catch((e) => say(e.message, true));
  }

  async function retry(lcid, requestId) {
    if (!window.confirm('Queue request ' + requestId + ' of ' + lcid + ' again, with a fresh attempt budget?')) return;
    const answer = await api('POST', '/v1/locks/' + segment(lcid) + '/requests/' + segment(requestId) + '/retry');
    if (answer.status === 202) {
      say(requestId + ' of ' + lcid + ' is queued again, at position ' + answer.body.position + '.');
    } else {
      say(problemText(answer), true);
    }
    await refresh();
  }

  // --- wiring ----------------------------------------------------------------------------------

  $('key-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('login-error').textContent = '';
    try {
      const error = await open($('key').value.trim());
      if (error) $('login-error').textContent = error;
    } catch (e) {
      $('login-error').textContent = 'Baton cannot be reached: ' + e.message;
    }
  });
  $('forget').addEventListener('click', forget);
  $('lookup').addEventListener('submit', (event) => {
    event.preventDefault();
    openDetail($('lookup-lcid').value.trim());
  });
  $('close-detail').addEventListener('click', () => {
    openLcid = null;
    $('detail').hidden = true;
  });
  $('busy-order').addEventListener('change', () => showBusy());

  if (key) {
    open(key).then((error) => {
      if (error) forget();
    });
  }
})();
