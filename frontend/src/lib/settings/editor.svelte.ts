// The Settings view's state: the settings as last read, one form per section, what is changed and
// not saved yet, the review of those changes (each section's diff before anything is written) and
// the save with its errors and confirmations. One Save writes every changed section, each through
// its own call: the hub checks the values (an error names the key, next to
// its field, and nothing of that section is written), writes the file keeping its comments and
// order, and applies what it can at once; the other sections are saved all the same. After a save
// only that section's form is refilled from the file, so a refused one keeps what was typed;
// Discard and Reload refill them all.

import type { Controls } from '../generated/control';
import type { Settings, SettingsChange, SettingsInput, SettingsPolicyDecision, SettingsPreview, SettingsRAG, SettingsSectionPreview, SettingsTokenRegenerated } from '../types';
import { codeForm, codeInput, emptyCodeForm, type CodeForm } from './code';
import { changedSections, ragChanged, ragKeyChanged, type SavedSection } from './changes';
import type { ErrorKey, Target } from './common';
import { fieldErrors, messageOf, saveErrors, type SaveErrors } from './errors';
import { mlForm, mlInput, emptyMLForm, type MLForm } from './ml';
import { emptyPolicyForm, emptyTestForm, policyForm, policyInput, testInput, type PolicyForm, type TestForm } from './policy';
import { emptyRAGForm, emptyRAGKeyForm, ragForm, ragKeyForm, ragKeyInput, type RAGKeyForm } from './rag';
import { emptySecurityForm, securityForm, securityInput, type SecurityForm } from './security';
import { emptyTasksForm, tasksForm, tasksInput, type TasksForm } from './taskafter';
import { toolsetsForm, toolsetsInput, toolsetsOrder } from './toolsets';
import { transportsForm, transportsInput, type TransportForm } from './transports';
import { emptyWebForm, webForm, webInput, type WebForm } from './web';
import { workspaceForm, workspaceInput } from './workspace';

/** The controls the Settings view calls. */
export type SettingsControl = Pick<
  Controls,
  | 'settings'
  | 'previewSettings'
  | 'saveTransports'
  | 'saveToolsets'
  | 'saveWorkspace'
  | 'savePolicy'
  | 'testPolicy'
  | 'saveML'
  | 'saveRAG'
  | 'saveSecurity'
  | 'saveWeb'
  | 'saveCode'
  | 'saveTasks'
  | 'setRAGAPIKey'
  | 'setAutostart'
  | 'regenerateToken'
>;

export class SettingsEditor {
  settings: Settings | null = $state(null);
  loadError = $state('');
  /** What is running: 'load', a save's target, 'test' or 'token'; '' when nothing is (every button waits). */
  busy = $state('');

  // One form per section, filled from the settings when read and after that section's save.
  transports: TransportForm[] = $state([]);
  toolsets: string[] = $state([]);
  workspace = $state('');
  policy: PolicyForm = $state(emptyPolicyForm());
  ml: MLForm = $state(emptyMLForm());
  rag: SettingsRAG = $state(emptyRAGForm());
  security: SecurityForm = $state(emptySecurityForm());
  web: WebForm = $state(emptyWebForm());
  tasks: TasksForm = $state(emptyTasksForm());
  ragKey: RAGKeyForm = $state(emptyRAGKeyForm());
  code: CodeForm = $state(emptyCodeForm());

  errors: Partial<Record<ErrorKey, SaveErrors>> = $state({});
  saved: Partial<Record<Target, SettingsChange>> = $state({});

  /** The test call as typed, and the hub's decision on it. */
  test: TestForm = $state(emptyTestForm());
  decision: SettingsPolicyDecision | null = $state(null);

  /** The last token regenerated here (its value is never shown). */
  tokenDone: SettingsTokenRegenerated | null = $state(null);

  /** The review of the changes as they were when it was asked for (see reviewed). */
  review: SettingsPreview | null = $state(null);
  private reviewedForms = '';

  /** What the last Save did: the sections written and those the hub refused. */
  outcome: { saved: SavedSection[]; refused: SavedSection[] } | null = $state(null);


  constructor(private readonly control: SettingsControl) {}

  /**
   * The sections changed here and not saved yet, in the view's order. A getter, not a $derived:
   * the editor outlives the view that created it (settingsEditor), and a derived would go with it.
   */
  get changed(): SavedSection[] {
    return changedSections(this, this.settings);
  }

  fill(s: Settings, only?: Target) {
    if (!only || only === 'transports') this.transports = transportsForm(s);
    if (!only || only === 'toolsets') this.toolsets = toolsetsForm(s);
    if (!only || only === 'workspace') this.workspace = workspaceForm(s);
    if (!only || only === 'policy') this.policy = policyForm(s);
    if (!only || only === 'ml') this.ml = mlForm(s);
    if (!only || only === 'rag') this.rag = ragForm(s);
    if (!only || only === 'security') this.security = securityForm(s);
    if (!only || only === 'web') this.web = webForm(s);
    if (!only || only === 'tasks') this.tasks = tasksForm(s);
    if (!only || only === 'code') this.code = codeForm(s);
    // Refilled after its own save only: a key typed and stored is not kept in the page.
    if (!only || only === 'ragkey') this.ragKey = ragKeyForm(s);
  }

  /**
   * Reads the settings when the view opens, and refills the forms, unless they hold unsaved
   * changes: those stay as typed, against the settings they were typed over (Reload reads again).
   */
  async open() {
    if (this.settings && this.changed.length) return;
    await this.load();
  }

  /** Reads the settings and refills every form (Reload). */
  async load() {
    this.busy = 'load';
    try {
      const s = await this.control.settings();
      this.settings = s;
      this.fill(s);
      this.loadError = '';
      this.errors = {};
    } catch (err) {
      this.loadError = messageOf(err);
    } finally {
      this.busy = '';
    }
  }

  /** Runs one section's save; on success the section's form is refilled from the file. */
  async save(target: Target, run: () => Promise<SettingsChange>) {
    this.busy = target;
    this.errors = { ...this.errors, [target]: undefined };
    try {
      const change = await run();
      this.saved = { ...this.saved, [target]: change };
      this.settings = change.settings;
      this.fill(change.settings, target);
    } catch (err) {
      this.errors = { ...this.errors, [target]: saveErrors(messageOf(err)) };
      this.saved = { ...this.saved, [target]: undefined };
    } finally {
      this.busy = '';
    }
  }

  /** The forms as they stand, to tell whether the review still shows them. */
  private formsKey(): string {
    const { transports, security, toolsets, workspace, policy, web, tasks, ml, rag, ragKey, code } = this;
    return JSON.stringify({ transports, security, toolsets, workspace, policy, web, tasks, ml, rag, ragKey, code });
  }

  /** The review, while the forms are still what it shows (any edit since puts it away). */
  get reviewed(): SettingsPreview | null {
    return this.review && this.reviewedForms === this.formsKey() ? this.review : null;
  }

  /** Whether the review found a section that would be refused (its error is beside its fields). */
  get reviewRefused(): boolean {
    return (this.reviewed?.sections ?? []).some((s) => s.error);
  }

  /**
   * Asks the hub for each changed section's diff before anything is written (its checks run
   * too: a refusal is placed next to its field). The RAG key is not shown, only said to change.
   */
  reviewChanges = async () => {
    const todo = this.changed;
    if (!todo.length || !this.settings) return;
    this.review = null;
    this.outcome = null;
    const input: SettingsInput = {};
    /** Sections refused here, before asking the hub (a rule's arguments, the RAG key). */
    const refused: SettingsSectionPreview[] = [];
    const errors: typeof this.errors = { ...this.errors };
    for (const section of todo) errors[section] = undefined;
    errors.ragkey = undefined;
    for (const section of todo) {
      switch (section) {
        case 'transports':
          input.transports = transportsInput(this.transports);
          break;
        case 'security':
          input.security = securityInput(this.security);
          break;
        case 'toolsets':
          input.toolsets = toolsetsInput(this.toolsets, toolsetsOrder(this.settings));
          break;
        case 'workspace':
          input.workspace = workspaceInput(this.workspace);
          break;
        case 'policy': {
          const built = policyInput(this.policy);
          if ('error' in built) {
            errors.policy = fieldErrors(built.error);
            refused.push({ section, diff: '', error: built.error.text });
          } else input.policy = built.value;
          break;
        }
        case 'web':
          input.web = webInput(this.web);
          break;
        case 'tasks':
          input.tasks = tasksInput(this.tasks);
          break;
        case 'ml':
          input.ml = mlInput(this.ml);
          break;
        case 'rag': {
          if (ragChanged(this, this.settings)) input.rag = this.rag;
          const key = ragKeyChanged(this) ? ragKeyInput(this.ragKey) : null;
          if (key && 'error' in key) {
            errors.ragkey = fieldErrors(key.error);
            refused.push({ section, diff: '', error: key.error.text });
          }
          break;
        }
        case 'code':
          input.code = codeInput(this.code);
          break;
      }
    }
    const key = this.formsKey();
    this.busy = 'review';
    try {
      const review = await this.control.previewSettings(input);
      for (const s of review.sections) {
        if (s.error) errors[s.section as SavedSection] = saveErrors(s.error);
      }
      this.errors = errors;
      // One entry per section, in the view's order; a section refused here has no diff to show.
      const bySection = new Map([...review.sections, ...refused].map((x) => [x.section, x]));
      this.review = { ...review, sections: todo.flatMap((x) => bySection.get(x) ?? []) };
      this.reviewedForms = key;
    } catch (err) {
      this.errors = { ...errors, review: saveErrors(messageOf(err)) };
    } finally {
      this.busy = '';
    }
  };

  /** Back to editing: the review is put away. */
  closeReview = () => {
    this.review = null;
  };

  /**
   * Saves every changed section, in the view's order. A section the hub refuses keeps its errors
   * beside its fields and what was typed; the others are written all the same.
   */
  saveAll = async () => {
    const todo = this.changed;
    if (!todo.length) return;
    this.saved = {};
    this.outcome = null;
    this.review = null;
    const saved: SavedSection[] = [];
    const refused: SavedSection[] = [];
    for (const section of todo) {
      (await this.saveSection(section) ? saved : refused).push(section);
    }
    this.outcome = { saved, refused };
  };

  /** Puts back what the file says in every form (the unsaved changes are dropped). */
  discard = () => {
    if (!this.settings) return;
    this.fill(this.settings);
    this.errors = {};
    this.outcome = null;
    this.review = null;
  };

  /** Saves one section; true when the hub wrote it. */
  private async saveSection(section: SavedSection): Promise<boolean> {
    switch (section) {
      case 'transports':
        await this.saveTransports();
        break;
      case 'security':
        await this.saveSecurity();
        break;
      case 'toolsets':
        await this.saveToolsets();
        break;
      case 'workspace':
        await this.saveWorkspace();
        break;
      case 'policy':
        await this.savePolicy();
        break;
      case 'web':
        await this.saveWeb();
        break;
      case 'tasks':
        await this.saveTasks();
        break;
      case 'ml':
        await this.saveML();
        break;
      case 'rag': {
        // The backend first (the key is checked against the backend in force), then the key.
        if (this.settings && ragChanged(this, this.settings)) await this.saveRAG();
        if (this.errors.rag) return false;
        if (ragKeyChanged(this)) await this.saveRAGKey();
        return !this.errors.ragkey;
      }
      case 'code':
        await this.saveCode();
        break;
    }
    return !this.errors[section];
  }

  /** Shows a problem found before sending anything next to its field. */
  formError(target: Target, field: string, text: string) {
    this.errors = { ...this.errors, [target]: fieldErrors({ field, text }) };
  }

  saveTransports = () => this.save('transports', () => this.control.saveTransports(transportsInput(this.transports)));
  saveToolsets = () => this.save('toolsets', () => this.control.saveToolsets(toolsetsInput(this.toolsets, toolsetsOrder(this.settings))));
  /** Checks the default set (saving it writes no toolsets key). */
  defaultToolsets = () => (this.toolsets = [...(this.settings?.toolsets.default ?? [])]);
  saveWorkspace = () => this.save('workspace', () => this.control.saveWorkspace(workspaceInput(this.workspace)));
  saveML = () => this.save('ml', () => this.control.saveML(mlInput(this.ml)));
  saveRAG = () => this.save('rag', () => this.control.saveRAG(this.rag));
  saveSecurity = () => this.save('security', () => this.control.saveSecurity(securityInput(this.security)));
  saveWeb = () => this.save('web', () => this.control.saveWeb(webInput(this.web)));
  saveCode = () => this.save('code', () => this.control.saveCode(codeInput(this.code)));
  saveTasks = () => this.save('tasks', () => this.control.saveTasks(tasksInput(this.tasks)));
  setAutostart = (on: boolean) => this.save('autostart', () => this.control.setAutostart(on));

  savePolicy = () => {
    const built = policyInput(this.policy);
    if ('error' in built) return this.formError('policy', built.error.field, built.error.text);
    return this.save('policy', () => this.control.savePolicy(built.value));
  };

  saveRAGKey = () => {
    const built = ragKeyInput(this.ragKey);
    if ('error' in built) return this.formError('ragkey', built.error.field, built.error.text);
    const body = built.value;
    if (!body) return;
    return this.save('ragkey', () => this.control.setRAGAPIKey(body));
  };

  /** Decides the test call against the rules as edited (not yet saved). */
  runTest = async () => {
    this.decision = null;
    this.errors = { ...this.errors, test: undefined };
    const built = testInput(this.policy, this.test);
    if ('error' in built) {
      this.errors = { ...this.errors, test: fieldErrors(built.error) };
      return;
    }
    this.busy = 'test';
    try {
      this.decision = await this.control.testPolicy(built.value);
    } catch (err) {
      this.errors = { ...this.errors, test: saveErrors(messageOf(err)) };
    } finally {
      this.busy = '';
    }
  };

  /** Regenerates a token in place (after the view's confirmation); true when it was. */
  regenerate = async (name: string): Promise<boolean> => {
    this.busy = 'token';
    this.errors = { ...this.errors, token: undefined };
    this.tokenDone = null;
    try {
      const done = await this.control.regenerateToken(name);
      this.tokenDone = done;
      this.settings = done.settings;
      return true;
    } catch (err) {
      this.errors = { ...this.errors, token: saveErrors(messageOf(err)) };
      return false;
    } finally {
      this.busy = '';
    }
  };

  /**
   * Reads whether the login entry exists again, after "Start at login" was switched elsewhere
   * (the tray, another window); only that: the forms keep what is being edited.
   */
  async refreshAutostart() {
    try {
      const s = await this.control.settings();
      if (this.settings) this.settings = { ...this.settings, autostart: s.autostart };
    } catch {
      // Reload shows it; the switch itself reported its own errors where it was made.
    }
  }
}

const editors = new WeakMap<SettingsControl, SettingsEditor>();

/**
 * The Settings view's editor for this dashboard, kept while the app runs: what is typed and not
 * saved yet survives a look at another tab.
 */
export function settingsEditor(control: SettingsControl): SettingsEditor {
  let ed = editors.get(control);
  if (!ed) {
    ed = new SettingsEditor(control);
    editors.set(control, ed);
  }
  return ed;
}

/** SectionProps are what every Settings section component takes: the editor and the settings. */
export interface SectionProps {
  ed: SettingsEditor;
  settings: Settings;
}
