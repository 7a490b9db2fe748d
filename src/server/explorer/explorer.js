// The explorer: plain browser JavaScript (an ES module), no build step. It reads the gateway's public API only
// (GET /chains, GET /requests/v3, GET /ready for paused fills) and follows a request live on the gateway's own
// stream (/ws). Amounts stay the API's exact values; `format.js` only rounds what is shown.
import { exactAmount, feeCost, formatAmount } from './format.js';
import { holdWords, pauseFromCheck, reasonWords } from './words.js';

(() => {
  const main = document.getElementById('main');
  const PAGE_SIZE = 20;
  const LIST_REFRESH_MS = 3000;
  /** How often a request with its deposit and no fill yet looks again whether its fills are paused. */
  const HOLD_REFRESH_MS = 3000;

  /**
   * Liquidity sources and routers by the names the API gives them (a route leg's `router`, and its
   * `includedSwapSources` when it lists them). DEX sources are named here as routes through them are added; a
   * name not listed is shown as it is.
   */
  const SOURCES = {
    'solver-inventory': "the solver's own inventory",
  };
  const STATUS_WORDS = {
    waiting: 'Waiting for deposit',
    depositing: 'Depositing',
    pending: 'Deposit received',
    submitted: 'Delivering',
    delayed: 'Delayed',
    success: 'Success',
    refund: 'Refunded',
    failure: 'Failed',
  };

  let chains = new Map();
  let timer = null;
  let holdTimer = null;
  let socket = null;

  // ---- helpers ---------------------------------------------------------------------------------------------

  /** An element with attributes and children (strings become text nodes: nothing from the API is parsed as HTML). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null) continue;
      if (key === 'class') node.className = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  async function api(path) {
    const response = await fetch(path, { headers: { accept: 'application/json' } });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.message || `${response.status} ${response.statusText}`);
    return body;
  }

  const short = (hex) =>
    typeof hex === 'string' && hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-6)}` : hex || '';
  const chainName = (id) => (chains.get(id) ? chains.get(id).displayName : `Chain ${id}`);

  function age(iso) {
    const seconds = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
    if (seconds < 60) return `${seconds}s ago`;
    if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
    if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
    return `${Math.floor(seconds / 86400)}d ago`;
  }
  const time = (ms) => new Date(ms).toLocaleString();

  function statusBadge(status) {
    return el('span', { class: `status status-${status}`, 'data-status': status }, STATUS_WORDS[status] || status);
  }

  /** A transaction hash, linked to the chain's block explorer when it has one. */
  function txLink(chainId, hash) {
    const chain = chains.get(chainId);
    if (chain && chain.explorerUrl) {
      const path = (chain.explorerPaths && chain.explorerPaths.transaction) || '/tx/{hash}';
      return el(
        'a',
        {
          class: 'mono',
          title: hash,
          'data-hash': hash,
          href: chain.explorerUrl.replace(/\/$/, '') + path.replace('{hash}', hash),
          rel: 'noopener',
        },
        short(hash),
      );
    }
    return el('code', { title: hash, 'data-hash': hash }, short(hash));
  }

  /**
   * An amount to significant digits, with the exact value in its title (hover) and `data-exact` (what copying it
   * gives, see the `copy` listener below).
   */
  function amountEl(amount, currency) {
    if (amount === undefined || amount === null || !currency) return '?';
    const exact = `${exactAmount(amount, currency.decimals)} ${currency.symbol}`;
    return el(
      'data',
      { class: 'amount', value: exact, title: exact, 'data-exact': exact },
      `${formatAmount(amount, currency.decimals)} ${currency.symbol}`,
    );
  }

  const amountOf = (side) => (side && side.currency ? amountEl(side.amount, side.currency) : '?');

  /** The request's route: origin and destination amounts with chains and symbols. */
  function routeOf(request) {
    const quoted = request.data && request.data.route && request.data.route.quoted;
    if (!quoted) return { from: '?', to: '?', originChainId: null, destinationChainId: null };
    const input = quoted.origin.inputCurrency;
    const output = quoted.destination.outputCurrency;
    // Getters: a DOM node lives in one place, so each use of an amount gets its own.
    return {
      get from() {
        return amountOf(input);
      },
      get to() {
        return amountOf(output);
      },
      originChainId: input.currency.chainId,
      destinationChainId: output.currency.chainId,
    };
  }

  /**
   * Whether fills to a chain are paused now, from `/ready` (it answers 503 with its checks when not ready, so the
   * body is read whatever the status): see `pauseFromCheck`.
   */
  async function pauseOf(chainId) {
    let body;
    try {
      const response = await fetch('/ready', { headers: { accept: 'application/json' } });
      body = await response.json();
    } catch {
      return null;
    }
    return pauseFromCheck(body && body.checks && body.checks[`fills:${chainId}`]);
  }

  function stopLive() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (holdTimer !== null) clearTimeout(holdTimer);
    holdTimer = null;
    if (socket !== null) socket.close();
    socket = null;
  }

  // ---- list ------------------------------------------------------------------------------------------------

  /** `/explorer?q=...&page=<continuation>`: the latest requests, or the ones matching a search. */
  async function showList(params) {
    const q = (params.get('q') || '').trim();
    const continuation = params.get('continuation');
    document.getElementById('q').value = q;
    document.title = 'Explorer · Intent gateway';
    const heading = el('h1', {}, q ? `Requests matching ${q}` : 'Latest requests');
    const holder = el('div', {}, el('p', { class: 'note' }, 'Loading…'));
    main.replaceChildren(heading, holder);

    const render = async () => {
      let result;
      try {
        result = await search(q, continuation);
      } catch (error) {
        holder.replaceChildren(el('p', { class: 'error', role: 'alert' }, error.message));
        return;
      }
      holder.replaceChildren(requestTable(result.requests), pager(q, result.continuation));
      // The first page of the unfiltered list follows new requests.
      if (!q && !continuation) timer = setTimeout(render, LIST_REFRESH_MS);
    };
    await render();
  }

  /** The requests a search term names: a request id, a user or deposit address, or a transaction hash. */
  async function search(q, continuation) {
    const page = (query) =>
      api(
        `/requests/v3?limit=${PAGE_SIZE}&${query}${continuation ? `&continuation=${encodeURIComponent(continuation)}` : ''}`,
      );
    if (!q) return page('');
    // `term` matches a request or order id, the user, sender, recipient, refundTo, the deposit address, and any
    // deposit, fill or refund transaction hash.
    if (/^0x([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/.test(q)) return page(`term=${q}`);
    throw new Error(
      'Search for a request id or transaction hash (0x and 64 hex digits) or an address (0x and 40 hex digits).',
    );
  }

  function requestTable(requests) {
    if (requests.length === 0) return el('p', { class: 'note' }, 'No requests.');
    const rows = requests.map((request) => {
      const route = routeOf(request);
      return el(
        'tr',
        { 'data-request-id': request.id },
        el(
          'td',
          { 'data-label': 'Request' },
          el('a', { class: 'mono', href: `/explorer/requests/${request.id}` }, short(request.id)),
        ),
        el(
          'td',
          { 'data-label': 'Route', class: 'route' },
          `${chainName(route.originChainId)}`,
          el('span', { class: 'arrow' }, '→'),
          `${chainName(route.destinationChainId)}`,
        ),
        el('td', { 'data-label': 'Amounts' }, route.from, el('span', { class: 'arrow' }, '→'), route.to),
        el('td', { 'data-label': 'Status' }, statusBadge(request.status)),
        el('td', { 'data-label': 'Age', title: request.createdAt }, age(request.createdAt)),
      );
    });
    return el(
      'table',
      { class: 'requests' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['Request', 'Route', 'Amounts', 'Status', 'Age'].map((h) => el('th', {}, h)),
        ),
      ),
      el('tbody', {}, rows),
    );
  }

  function pager(q, continuation) {
    const nav = el('div', { class: 'pager' });
    if (continuation) {
      const params = new URLSearchParams();
      if (q) params.set('q', q);
      params.set('continuation', continuation);
      nav.append(el('a', { href: `/explorer?${params}` }, 'Older requests →'));
    }
    return nav;
  }

  // ---- one request -----------------------------------------------------------------------------------------

  /** `/explorer/requests/{id}`: the request's timeline, transactions and fees, updated live from `/ws`. */
  async function showRequest(id) {
    document.title = `Request ${short(id)} · Intent gateway`;
    const live = el('span', { class: 'live', id: 'live' }, 'connecting to the status stream…');
    const body = el('div', {}, el('p', { class: 'note' }, 'Loading…'));
    main.replaceChildren(el('h1', {}, 'Request ', el('span', { class: 'mono id' }, id)), live, body);

    const load = async () => {
      const result = await api(`/requests/v3?id=${encodeURIComponent(id)}`);
      const request = result.requests[0];
      if (!request) throw new Error('No request with this id on this gateway.');
      // A paid request waiting for its fill may be held: no status event says when a hold starts or ends, so the
      // page looks again while the request is `pending`.
      const pending = request.status === 'pending';
      const pause = pending ? await pauseOf(routeOf(request).destinationChainId) : null;
      body.replaceChildren(...requestView(request, pause));
      if (holdTimer !== null) clearTimeout(holdTimer);
      holdTimer = pending ? setTimeout(() => load().catch(() => undefined), HOLD_REFRESH_MS) : null;
    };
    try {
      await load();
    } catch (error) {
      body.replaceChildren(el('p', { class: 'error', role: 'alert' }, error.message));
      live.textContent = '';
      return;
    }
    follow(id, live, load);
  }

  /** Subscribes to the request on `/ws`; each status event reloads the view. Reconnects when the socket drops. */
  function follow(id, live, load) {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
    const ws = new WebSocket(url);
    socket = ws;
    ws.addEventListener('message', (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch {
        return;
      }
      if (frame.type === 'connection' && frame.status === 'ready') {
        ws.send(JSON.stringify({ type: 'subscribe', event: 'request.status.updated', filters: { id } }));
      } else if (frame.type === 'subscribe' && frame.status === 'success') {
        live.textContent = 'live';
        live.classList.add('on');
      } else if (frame.event === 'request.status.updated') {
        load().catch((error) => {
          live.textContent = `update failed: ${error.message}`;
        });
      }
    });
    ws.addEventListener('close', () => {
      live.classList.remove('on');
      if (socket !== ws) return;
      live.textContent = 'stream closed; reconnecting…';
      timer = setTimeout(() => {
        if (socket === ws) {
          load().catch(() => undefined);
          follow(id, live, load);
        }
      }, 2000);
    });
  }

  /** Each leg of the route (as executed, else as quoted): what went in, what came out, and through what. */
  function routeView(data, deposited) {
    const route = data.route || {};
    const quoted = route.quoted || {};
    const actual = route.actual || {};
    const legs = [
      ['origin', actual.origin || quoted.origin],
      ['destination', actual.destination || quoted.destination],
    ].filter(([, leg]) => leg && leg.inputCurrency);
    if (legs.length === 0) return el('p', { class: 'note' }, 'No route recorded.');
    return el(
      'ol',
      { class: 'legs' },
      legs.map(([kind, leg]) => {
        const input = leg.inputCurrency;
        const output = leg.outputCurrency;
        const chain = chainName(input.currency.chainId);
        const sources =
          Array.isArray(leg.includedSwapSources) && leg.includedSwapSources.length > 0
            ? leg.includedSwapSources
            : [leg.router].filter(Boolean);
        const via = sources.map((source) => SOURCES[source] || source).join(', ');
        const swapped = output && output.currency.address.toLowerCase() !== input.currency.address.toLowerCase();
        let text;
        if (swapped)
          text = [amountOf(input), ' swapped to ', amountOf(output), ` on ${chain}`, via ? ` via ${via}` : ''];
        else if (kind === 'origin') text = [amountOf(input), ` ${deposited ? 'deposited' : 'to deposit'} on ${chain}`];
        else if (output) text = [amountOf(output), ` delivered on ${chain}`, via ? ` from ${via}` : ''];
        else text = [`Nothing delivered on ${chain}`];
        return el(
          'li',
          { 'data-leg': kind, 'data-sources': sources.join(' ') },
          el('b', {}, kind === 'origin' ? 'Origin' : 'Destination'),
          ' ',
          ...text,
        );
      }),
    );
  }

  function requestView(request, pause) {
    const data = request.data || {};
    const route = routeOf(request);
    const inTxs = data.inTxs || [];
    const outTxs = data.outTxs || [];
    const fills = outTxs.filter((tx) => tx.chainId === route.destinationChainId);
    const refunds = outTxs.filter((tx) => tx.chainId !== route.destinationChainId);
    const created = new Date(request.createdAt).getTime();
    const updated = new Date(request.updatedAt).getTime();

    const summary = el(
      'div',
      { class: 'card' },
      el(
        'dl',
        { class: 'facts' },
        el('dt', {}, 'Status'),
        el('dd', {}, statusBadge(request.status)),
        el('dt', {}, 'Sends'),
        el('dd', {}, route.from, ` on ${chainName(route.originChainId)}`),
        el('dt', {}, 'Receives'),
        el('dd', {}, route.to, ` on ${chainName(route.destinationChainId)}`),
        el('dt', {}, 'User'),
        el('dd', { class: 'mono' }, request.user),
        el('dt', {}, 'Recipient'),
        el('dd', { class: 'mono' }, request.recipient),
        request.depositAddress
          ? [el('dt', {}, 'Deposit address'), el('dd', { class: 'mono' }, request.depositAddress)]
          : null,
        el('dt', {}, 'Created'),
        el('dd', {}, `${time(created)} (${age(request.createdAt)})`),
      ),
    );

    // Timeline: each step done, failed or still to come.
    const steps = [];
    steps.push(el('li', { class: 'done' }, el('b', {}, 'Quoted'), ' ', el('span', { class: 'when' }, time(created))));
    const deposit = inTxs[0];
    steps.push(
      deposit
        ? el(
            'li',
            { class: 'done' },
            el('b', {}, 'Deposit seen'),
            ' ',
            txLink(deposit.chainId, deposit.txHash),
            ' ',
            el('span', { class: 'when' }, deposit.timestamp ? time(deposit.timestamp * 1000) : ''),
          )
        : el(
            'li',
            { class: request.status === 'waiting' ? 'todo' : 'done' },
            el('b', {}, 'Deposit'),
            ' ',
            el('span', { class: 'when' }, request.status === 'waiting' ? 'waiting for the deposit…' : ''),
          ),
    );
    if (request.status !== 'refund' || fills.length > 0) {
      const fill = fills[0];
      steps.push(
        fill
          ? el(
              'li',
              { class: 'done' },
              el('b', {}, 'Fill sent'),
              ' ',
              txLink(fill.chainId, fill.txHash),
              ' ',
              el('span', { class: 'when' }, fill.timestamp ? time(fill.timestamp * 1000) : ''),
            )
          : el('li', { class: 'todo' }, el('b', {}, 'Fill'), ' ', el('span', { class: 'when' }, 'not sent yet')),
      );
    }
    if (pause && fills.length === 0) {
      const chain = chainName(route.destinationChainId);
      steps.push(
        el(
          'li',
          { class: 'warn', 'data-hold': pause.kind },
          el('b', {}, 'Held'),
          ' ',
          el('span', { class: 'when' }, pause.since ? `since ${time(pause.since)}` : ''),
          el('div', {}, holdWords(pause.kind, chain)),
          el('details', {}, el('summary', {}, "The gateway's own words"), el('code', {}, pause.message)),
        ),
      );
    }
    const reason = data.failReason && data.failReason !== 'N/A' ? data.failReason : null;
    if (request.status === 'success') {
      steps.push(
        el(
          'li',
          { class: 'done', 'data-final': 'success' },
          el('b', {}, 'Success'),
          ' ',
          el('span', { class: 'when' }, time(updated)),
          el('div', {}, route.to, ' delivered to the recipient.'),
        ),
      );
    } else if (request.status === 'refund') {
      const refund = refunds[0];
      steps.push(
        el(
          'li',
          { class: 'warn', 'data-final': 'refund' },
          el('b', {}, 'Refunded'),
          ' ',
          refund ? txLink(refund.chainId, refund.txHash) : null,
          ' ',
          el('span', { class: 'when' }, time(updated)),
          el('div', {}, reasonWords(reason, 'The deposit was sent back.')),
        ),
      );
    } else if (request.status === 'failure') {
      const refundReason = data.refundFailReason && data.refundFailReason !== 'N/A' ? data.refundFailReason : null;
      steps.push(
        el(
          'li',
          { class: 'bad', 'data-final': 'failure' },
          el('b', {}, 'Failed'),
          ' ',
          el('span', { class: 'when' }, time(updated)),
          el('div', {}, reasonWords(reason, 'The fill failed.')),
          refundReason ? el('div', {}, reasonWords(refundReason, '', 'Refund: ')) : null,
        ),
      );
    } else {
      steps.push(
        el('li', { class: 'todo' }, el('b', {}, 'Success or refund'), ' ', el('span', { class: 'when' }, 'to come')),
      );
    }

    const transactions = [
      ...inTxs.map((tx) => ['Deposit', tx]),
      ...fills.map((tx) => ['Fill', tx]),
      ...refunds.map((tx) => ['Refund', tx]),
    ];

    return [
      summary,
      el('h2', {}, 'Route'),
      el('div', { class: 'card' }, routeView(data, inTxs.length > 0)),
      el('h2', {}, 'Timeline'),
      el('div', { class: 'card' }, el('ol', { class: 'timeline' }, steps)),
      el('h2', {}, 'Transactions'),
      el(
        'div',
        { class: 'card' },
        transactions.length === 0
          ? el('p', { class: 'note' }, 'None yet.')
          : el(
              'table',
              { class: 'fees' },
              el('thead', {}, el('tr', {}, el('th', {}, 'Kind'), el('th', {}, 'Chain'), el('th', {}, 'Hash'))),
              el(
                'tbody',
                {},
                transactions.map(([kind, tx]) =>
                  el(
                    'tr',
                    { 'data-kind': kind.toLowerCase() },
                    el('td', {}, kind),
                    el('td', {}, chainName(tx.chainId)),
                    el('td', {}, txLink(tx.chainId, tx.txHash)),
                  ),
                ),
              ),
            ),
      ),
      el('h2', {}, 'Fees'),
      el('div', { class: 'card' }, feesTable(data.fees, request.status)),
    ];
  }

  /** The fees as costs to the user, quoted and actual; a fee that is zero in both is left out. */
  function feesTable(fees, status) {
    const pending = ['waiting', 'depositing', 'pending', 'submitted', 'delayed'].includes(status)
      ? 'after the fill'
      : '—';
    if (!fees || !fees.quoted) return el('p', { class: 'note' }, 'No fees recorded.');
    const currency = fees.currency || { symbol: '', decimals: 0 };
    const cell = (name, bucket) => {
      if (!bucket) return '—';
      const cost = feeCost(name, bucket, currency.decimals);
      const exact = `${cost.exact} ${currency.symbol}`;
      return [
        el(
          'data',
          { class: 'amount', value: exact, title: exact, 'data-exact': exact },
          `${cost.amount} ${currency.symbol}`,
        ),
        ' ',
        el('span', { class: 'usd' }, `(${cost.usd})`),
      ];
    };
    const isZero = (bucket) => !bucket || /^-?0*$/.test(String(bucket.amount));
    const names = Object.keys(fees.quoted).filter(
      (name) => !isZero(fees.quoted[name]) || (fees.actual && !isZero(fees.actual[name])),
    );
    if (names.length === 0) return el('p', { class: 'note' }, 'No fees.');
    return el(
      'table',
      { class: 'fees' },
      el('thead', {}, el('tr', {}, el('th', {}, 'Fee'), el('th', {}, 'Quoted'), el('th', {}, 'Actual'))),
      el(
        'tbody',
        {},
        names.map((name) =>
          el(
            'tr',
            { 'data-fee': name },
            el('td', {}, feeCost(name, fees.quoted[name], currency.decimals).name),
            el('td', { 'data-phase': 'quoted' }, cell(name, fees.quoted[name])),
            el('td', { 'data-phase': 'actual' }, fees.actual ? cell(name, fees.actual[name]) : pending),
          ),
        ),
      ),
    );
  }

  /**
   * Copying gives exact amounts: a selection inside one amount copies its exact value, and a selection across
   * several copies the selected text with each amount's rounded value replaced by the exact one.
   */
  document.addEventListener('copy', (event) => {
    const selection = document.getSelection();
    if (!event.clipboardData || !selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    const range = selection.getRangeAt(0);
    const common = range.commonAncestorContainer;
    const inside = (common.nodeType === Node.ELEMENT_NODE ? common : common.parentElement).closest('[data-exact]');
    let text;
    if (inside) text = inside.dataset.exact;
    else {
      const fragment = range.cloneContents();
      const amounts = fragment.querySelectorAll('[data-exact]');
      if (amounts.length === 0) return;
      for (const amount of amounts) amount.textContent = amount.dataset.exact;
      // Laid out off screen, so the copied text keeps the line and cell breaks a plain copy has.
      const holder = el('div', { style: 'position:fixed;left:-10000px;top:0;white-space:pre-wrap' }, fragment);
      document.body.append(holder);
      text = holder.innerText;
      holder.remove();
    }
    event.clipboardData.setData('text/plain', text);
    event.preventDefault();
  });

  // ---- routing ---------------------------------------------------------------------------------------------

  async function route() {
    stopLive();
    const match = /^\/explorer\/requests\/([^/]+)\/?$/.exec(location.pathname);
    if (match) await showRequest(decodeURIComponent(match[1]));
    else await showList(new URLSearchParams(location.search));
  }

  document.getElementById('search').addEventListener('submit', (event) => {
    event.preventDefault();
    const q = document.getElementById('q').value.trim();
    history.pushState(null, '', q ? `/explorer?q=${encodeURIComponent(q)}` : '/explorer');
    route();
  });
  window.addEventListener('popstate', () => route());

  api('/chains')
    .then((result) => {
      chains = new Map(result.chains.map((chain) => [chain.id, chain]));
    })
    .catch(() => undefined)
    .finally(() => route());
})();
