/* The chat WebSocket: connect on demand, reconnect with jittered backoff, queue one frame. */

const BACKOFF_MIN = 500;
const BACKOFF_MAX = 15000;
const QUEUE_ATTEMPTS = 3; // failed connects before a waiting frame is given up
// The server closes a socket its reader left idle (WEBSOCKET_IDLE_SECONDS) with this code: no
// reconnect, no "Reconnecting…"; the reader's next question or vote opens a new one.
const IDLE_CLOSE = 4010;

export class Connection {
  /**
   * @param {string} path the socket's path, e.g. "/ws/chat/"
   * @param {{onEvent, onDropped, onGiveUp, onStatus}} hooks onDropped(): the socket closed
   *   while open; onGiveUp(frame): a queued frame could not be sent; onStatus(kind): "" |
   *   "reconnecting" | "offline".
   */
  constructor(path, hooks) {
    this.path = path;
    this.hooks = hooks;
    this.socket = null;
    this.wanted = false; // the panel was opened at least once: keep a connection
    this.attempts = 0;
    this.retryTimer = 0;
    this.queued = null;
    this.leaving = false;
    this.idle = false; // the server closed the socket as idle: connect only for a frame
  }

  get open() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    return scheme + location.host + this.path;
  }

  /** Send now, or queue it (one frame) and connect; true when it went out at once. */
  send(frame) {
    if (this.open) {
      this.socket.send(JSON.stringify(frame));
      return true;
    }
    this.queued = frame;
    this.connect();
    return false;
  }

  /** Send only if open; never queues (feedback, stop). */
  sendNow(frame) {
    if (!this.open) {
      this.connect();
      return false;
    }
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  connect() {
    this.wanted = true;
    this.idle = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = 0;
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) return;
    let socket;
    try {
      socket = new WebSocket(this.url());
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.attempts = 0;
      this.hooks.onStatus("");
      if (this.queued) {
        const frame = this.queued;
        this.queued = null;
        socket.send(JSON.stringify(frame));
      }
    };
    socket.onmessage = (message) => {
      if (this.socket !== socket) return;
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      this.hooks.onEvent(event);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.leaving) return;
      if (event.code === IDLE_CLOSE && !this.queued) {
        this.idle = true;
        return;
      }
      if (!this.queued) this.hooks.onDropped();
      this.scheduleReconnect();
    };
  }

  /** Close this socket at once and open a fresh one (the server cancels what ran on it). */
  restart() {
    const socket = this.socket;
    this.socket = null;
    this.queued = null;
    socket?.close();
    this.connect();
  }

  scheduleReconnect() {
    if (!this.wanted || this.retryTimer || this.leaving) return;
    if (this.queued && this.attempts >= QUEUE_ATTEMPTS) {
      // The frame has waited long enough: give it back, keep trying in the background.
      const frame = this.queued;
      this.queued = null;
      this.hooks.onGiveUp(frame);
    }
    let delay = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** this.attempts);
    delay = delay / 2 + (Math.random() * delay) / 2; // jitter, so a restart is not a stampede
    this.attempts += 1;
    this.hooks.onStatus(navigator.onLine === false ? "offline" : "reconnecting");
    this.retryTimer = setTimeout(() => {
      this.retryTimer = 0;
      this.connect();
    }, delay);
  }

  reconnectNow() {
    if (!this.wanted || this.leaving || this.idle) return;
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) return;
    this.attempts = 0;
    this.connect();
  }
}
