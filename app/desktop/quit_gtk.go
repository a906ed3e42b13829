//go:build (desktop || bindings) && linux && cgo

package desktop

/*
#cgo linux pkg-config: gtk+-3.0
#include <gtk/gtk.h>

// Runs on GTK's main thread, from its main loop. Until gtk_main runs (a quit asked for during
// start-up) gtk_main_quit would have no loop to end, so the source stays until one does.
static gboolean switchboard_end_main_loop(gpointer data) {
	(void)data;
	if (gtk_main_level() == 0) {
		return G_SOURCE_CONTINUE;
	}
	gtk_main_quit();
	return G_SOURCE_REMOVE;
}

static void switchboard_queue_end_main_loop(void) {
	g_idle_add(switchboard_end_main_loop, NULL);
}

// Shows, de-iconifies and raises the app's top-level window (the one titled "Switchboard"),
// asking the window manager for focus: what a second launch of the app should do.
static gboolean switchboard_present(gpointer data) {
	(void)data;
	GList *tops = gtk_window_list_toplevels();
	for (GList *l = tops; l != NULL; l = l->next) {
		GtkWindow *w = GTK_WINDOW(l->data);
		const gchar *title = gtk_window_get_title(w);
		if (gtk_window_get_window_type(w) == GTK_WINDOW_TOPLEVEL && title != NULL && g_strcmp0(title, "Switchboard") == 0) {
			gtk_window_present(w);
		}
	}
	g_list_free(tops);
	return G_SOURCE_REMOVE;
}

static void switchboard_queue_present(void) {
	g_idle_add(switchboard_present, NULL);
}
*/
import "C"

// endMainLoop makes GTK's main loop return, which closes the window and lets wails.Run return.
// It only queues the quit (g_idle_add is safe from any thread); the quit itself runs on the main
// thread. Wails' own quit calls gtk_main_quit on whichever goroutine asked, and two of those at
// once (a SIGTERM reaches Wails' signal handler and ours) race the main thread freeing the loop
// as it returns; a quit before gtk_main started was lost. Called once per process (desktop.Quit).
func (*desktop) endMainLoop() { C.switchboard_queue_end_main_loop() }

// presentWindow shows and raises the window on GTK's main thread (gtk_window_present): Wails'
// WindowShow only maps a hidden window and does not raise one behind others.
func (*desktop) presentWindow() { C.switchboard_queue_present() }
