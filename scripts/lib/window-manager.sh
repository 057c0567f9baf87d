# Sourced by scripts that run the desktop app on a display of their own (Xvfb): a window
# manager on it, as a person has one. Focus, stacking, placement, decorations and dialogs
# transient for the app's window all differ without one, so the app is tested with openbox.

# start_window_manager DISPLAY LOG: openbox on DISPLAY (the system's defaults, not a person's
# ~/.config/openbox; no session manager), its output in LOG. Returns once it runs, with its
# process id in WM_PID; fails, naming LOG, if it does not take the display within 10 s.
start_window_manager() {
  local display="$1" log="$2"
  command -v openbox >/dev/null || { echo "!! openbox is missing: apt-get install openbox (scripts/test-deps.sh installs it)"; return 1; }
  local args=(--sm-disable)
  [ ! -f /etc/xdg/openbox/rc.xml ] || args+=(--config-file /etc/xdg/openbox/rc.xml)
  DISPLAY="$display" openbox "${args[@]}" > "$log" 2>&1 &
  WM_PID=$!
  # openbox announces itself on the root window (_NET_SUPPORTING_WM_CHECK) once it has taken
  # the display over; before that a window mapped would go unmanaged.
  local _
  for _ in $(seq 100); do
    window_manager_running "$display" && return 0
    kill -0 "$WM_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "!! openbox did not start on $display ($log):"
  cat "$log"
  return 1
}

# window_manager_running DISPLAY: is a window manager managing DISPLAY?
window_manager_running() {
  DISPLAY="$1" xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q 'window id'
}
