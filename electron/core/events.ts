import { EventEmitter } from 'node:events';
import type { EventName, EventPayload } from '../../shared/contract/index.ts';

/** Events from core to every connected renderer, typed by the contract. */
export class EventBus {
  private readonly emitter = new EventEmitter();
  constructor() {
    // Each connected window or WebSocket client subscribes once per event name.
    this.emitter.setMaxListeners(200);
  }
  emit<K extends EventName>(name: K, payload: EventPayload<K>): void {
    this.emitter.emit('event', name, payload);
  }
  /** Every event, for transports that forward all of them; returns an unsubscribe. */
  onAny(listener: (name: EventName, payload: unknown) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }
}
