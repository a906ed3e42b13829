import { describe, expect, it } from 'vitest';
import { tabForKey } from './tabs';

describe('tabForKey', () => {
  const tabs = ['overview', 'sessions', 'settings'] as const;
  it('moves to the neighbour with the arrows, wrapping round', () => {
    expect(tabForKey(tabs, 'overview', 'ArrowRight')).toBe('sessions');
    expect(tabForKey(tabs, 'settings', 'ArrowRight')).toBe('overview');
    expect(tabForKey(tabs, 'overview', 'ArrowLeft')).toBe('settings');
    expect(tabForKey(tabs, 'sessions', 'ArrowLeft')).toBe('overview');
  });
  it('goes to the ends with Home and End', () => {
    expect(tabForKey(tabs, 'sessions', 'Home')).toBe('overview');
    expect(tabForKey(tabs, 'sessions', 'End')).toBe('settings');
  });
  it('leaves other keys alone', () => {
    expect(tabForKey(tabs, 'sessions', 'Enter')).toBeNull();
    expect(tabForKey(tabs, 'sessions', 'a')).toBeNull();
    expect(tabForKey([], 'x', 'ArrowRight')).toBeNull();
  });
});
