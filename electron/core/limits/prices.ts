import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { PriceRow, PricesList, pricesCommands } from '../../../shared/contract/prices.ts';
import { ALL_TOOLS } from '../../../shared/catalogue/index.ts';
import { toolPriceOf, type PriceScale, type ToolPrice } from '../../../shared/prices.ts';
import type { Db } from '../db/open.ts';

function scaleWords(s: PriceScale): string {
  if (s.kind === 'area') return `${s.field}: by output area (the price is at ×${s.from})`;
  if (s.kind === 'count') return `${s.field}: per image`;
  const times = Object.entries(s.times).map(([v, t]) => `${v} costs ${t} times`);
  return `${s.field}: ${times.join(', ')}`;
}

/** The price table with the user's own prices over it (prices_own, queue migration 10). */
export class PriceBook {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      own: db.prepare('SELECT credits FROM prices_own WHERE tool = ?').pluck(),
      all: db.prepare('SELECT tool, credits FROM prices_own'),
      set: db.prepare(
        'INSERT INTO prices_own (tool, credits, set_at) VALUES (?, ?, ?) ON CONFLICT (tool) DO UPDATE SET credits = excluded.credits, set_at = excluded.set_at',
      ),
      drop: db.prepare('DELETE FROM prices_own WHERE tool = ?'),
      dropAll: db.prepare('DELETE FROM prices_own'),
    };
  }

  priceOf(tool: string): ToolPrice {
    return toolPriceOf(tool, (this.stmts.own.get(tool) as number | undefined) ?? null);
  }

  list(): PricesList {
    const own = new Map((this.stmts.all.all() as { tool: string; credits: number }[]).map((r) => [r.tool, r.credits]));
    const prices: PriceRow[] = ALL_TOOLS.map((t) => {
      const p = toolPriceOf(t.id, own.get(t.id) ?? null);
      return {
        tool: t.id,
        title: t.title,
        published: p.credits,
        own: p.own,
        effective: p.effective,
        unit: p.unit,
        scales: p.scales.map(scaleWords),
        source: p.source,
        checked: p.checked,
        note: p.note ?? null,
      };
    });
    return { prices };
  }

  set(tool: string, credits: number): void {
    this.stmts.set.run(tool, credits, Date.now());
  }

  reset(tool?: string): void {
    if (tool === undefined) this.stmts.dropAll.run();
    else this.stmts.drop.run(tool);
  }
}

export function pricesHandlers(book: PriceBook): HandlerMap<typeof pricesCommands> {
  return {
    'prices.list': () => book.list(),
    'prices.set': ({ tool, credits }) => {
      book.set(tool, credits);
      return book.list();
    },
    'prices.reset': ({ tool }) => {
      book.reset(tool);
      return book.list();
    },
  };
}
