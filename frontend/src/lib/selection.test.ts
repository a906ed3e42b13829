import { describe, expect, it } from 'vitest';
import { Selection, selectedIn } from './selection.svelte';

interface Item {
  id: string;
}
const items = (...ids: string[]): Item[] => ids.map((id) => ({ id }));
const key = (i: Item) => i.id;

describe('selectedIn', () => {
  it('keeps a choice the list has, otherwise nothing or the first item', () => {
    expect(selectedIn(items('a', 'b'), key, 'b')).toBe('b');
    expect(selectedIn(items('a', 'b'), key, 'gone')).toBe('');
    expect(selectedIn(items('a', 'b'), key, '')).toBe('');
    expect(selectedIn(items('a', 'b'), key, 'gone', true)).toBe('a');
    expect(selectedIn([], key, '', true)).toBe('');
  });
});

describe('Selection', () => {
  it('shows the newest item until one is chosen, when asked to', () => {
    const sel = new Selection({ items: () => items('new', 'old'), key, selected: () => '', onselect: () => undefined, first: true });
    expect(sel.id).toBe('new');
    sel.choose('old');
    expect(sel.id).toBe('old');
  });

  it('sends a click to the URL when there is one; the URL’s choice is what shows', () => {
    let url = '';
    const list = items('a', 'b');
    const sent: string[] = [];
    const sel = new Selection({ items: () => list, key, selected: () => url, onselect: () => (id) => sent.push(id) });
    expect(sel.id).toBe('');
    sel.choose('b');
    expect(sent).toEqual(['b']);
    url = 'b';
    expect(sel.chosen).toBe('b');
  });

  it('without a URL, keeps the click until the URL’s choice changes', () => {
    let url = 'a';
    const sel = new Selection({ items: () => items('a', 'b', 'c'), key, selected: () => url, onselect: () => undefined });
    expect(sel.chosen).toBe('a');
    expect(sel.id).toBe('a');
    sel.choose('c');
    expect(sel.chosen).toBe('c');
    expect(sel.id).toBe('c');
    url = 'b';
    expect(sel.chosen).toBe('b');
  });
});
