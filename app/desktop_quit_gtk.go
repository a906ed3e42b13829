//go:build (desktop || bindings) && linux && cgo

package app

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
*/
import "C"

// endMainLoop makes GTK's main loop return, which closes the window and lets wails.Run return.
// It only queues the quit (g_idle_add is safe from any thread); the quit itself runs on the main
// thread. Wails' own quit calls gtk_main_quit on whichever goroutine asked, and two of those at
// once (a SIGTERM reaches Wails' signal handler and ours) race the main thread freeing the loop
// as it returns; a quit before gtk_main started was lost. Called once per process (desktop.Quit).
func endMainLoop() { C.switchboard_queue_end_main_loop() }
