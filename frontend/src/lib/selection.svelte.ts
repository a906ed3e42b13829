// The item a list/detail view (Builds, Processes, the IDE sessions) shows in its detail pane: the
// one the URL names (#tab/<id>) or the one clicked, as long as the list has it. A click goes to the
// URL (onselect) when the view has one; otherwise it is kept here until the URL's choice changes.

export interface SelectionSource<T> {
  /** The list as shown. */
  items: () => T[];
  key: (item: T) => string;
  /** The URL's choice ('' = none). */
  selected: () => string;
  /** Where a click goes (the URL), if anywhere. */
  onselect: () => ((id: string) => void) | undefined;
  /** With no valid choice, show the first item (the newest) instead of nothing. */
  first?: boolean;
}

/** selectedIn is the chosen id when the list has it, else the first item's (with first) or ''. */
export function selectedIn<T>(items: T[], key: (item: T) => string, chosen: string, first = false): string {
  if (chosen && items.some((i) => key(i) === chosen)) return chosen;
  return first && items.length ? key(items[0]) : '';
}

export class Selection<T> {
  /** A choice made here (no onselect), valid while the URL's choice is still `from`. */
  private picked: { from: string; id: string } | null = $state(null);

  constructor(private readonly src: SelectionSource<T>) {}

  /** The choice: the URL's, or the last click when there is no URL to go to. */
  get chosen(): string {
    const url = this.src.selected();
    return this.picked && this.picked.from === url ? this.picked.id : url;
  }

  /** The id shown in the detail pane ('' = none). */
  readonly id: string = $derived.by(() => selectedIn(this.src.items(), this.src.key, this.chosen, this.src.first));

  choose = (id: string) => {
    const onselect = this.src.onselect();
    if (onselect) onselect(id);
    else this.picked = { from: this.src.selected(), id };
  };
}
