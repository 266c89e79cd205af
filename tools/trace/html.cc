// tools/trace/html.cc: a trace as one self-contained HTML page: every
// style and script inline, no fonts or scripts fetched, so it opens from
// disk with no network. One lane per P, then one per M; goroutine runs,
// syscalls, parked Ms and usleeps are slices, other events are ticks; each
// has a data-tip that the page's script shows on hover. Positions are
// percentages of the trace's duration, so zooming only widens the lanes.
#include <algorithm>
#include <cstdio>
#include <set>

#include "trace_file.h"

namespace gort::trace {

namespace {

constexpr const char* kStyle = R"(
body{font:13px sans-serif;margin:0;background:#fafafa;color:#222}
header{padding:8px 12px;background:#263238;color:#eee}
header h1{font-size:16px;margin:0 0 4px}
#controls button{margin-right:4px}
#timeline{overflow-x:auto;position:relative;--zoom:1}
.lane{display:flex;border-bottom:1px solid #ddd;height:26px;width:max-content;min-width:100%}
.lane.m{background:#f3f3f8}
.lane-label{position:sticky;left:0;z-index:2;flex:0 0 110px;background:#eceff1;
 padding:5px 6px;box-sizing:border-box;border-right:1px solid #ccc;
 white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.lane-body{position:relative;flex:0 0 auto;width:calc(var(--zoom)*(100vw - 130px))}
.slice{position:absolute;top:3px;height:20px;min-width:1px;box-sizing:border-box;
 overflow:hidden;font-size:11px;line-height:20px;padding-left:2px;
 border-right:1px solid rgba(0,0,0,.25);color:#fff;white-space:nowrap}
.slice.syscall{background:#e67e22;top:6px;height:14px}
.slice.parked{background:#b0bec5;top:9px;height:8px}
.slice.usleep{background:#8e44ad;top:6px;height:14px}
.slice.spinning{background:#f1c40f;top:9px;height:8px}
.event{position:absolute;top:0;width:2px;height:26px;background:#c0392b;z-index:1}
.event.GoCreate{background:#27ae60}.event.GoUnblock{background:#2980b9}
.event.ProcRetake{background:#d35400;width:3px}.event.Steal{background:#16a085}
.event.GoEnd{background:#555}.event.Gomaxprocs{background:#000;width:3px}
.ruler{height:18px;position:relative}
.tick{position:absolute;top:0;font-size:10px;border-left:1px solid #999;padding-left:2px}
#tooltip{position:fixed;display:none;background:#fffde7;border:1px solid #aaa;
 padding:4px 6px;font-size:12px;pointer-events:none;z-index:10;white-space:pre}
#legend span{display:inline-block;margin-right:10px}
#legend i{display:inline-block;width:10px;height:10px;margin-right:3px}
)";

constexpr const char* kScript = R"(
(function(){
 var tl=document.getElementById('timeline'),tip=document.getElementById('tooltip');
 var zoom=1;
 function setZoom(z){zoom=Math.max(1,Math.min(z,4096));tl.style.setProperty('--zoom',zoom);
  document.getElementById('zoom-level').textContent=zoom+'x';}
 document.getElementById('zoom-in').onclick=function(){setZoom(zoom*2);};
 document.getElementById('zoom-out').onclick=function(){setZoom(zoom/2);};
 document.getElementById('zoom-reset').onclick=function(){setZoom(1);};
 tl.addEventListener('mouseover',function(e){var t=e.target.closest('[data-tip]');
  if(!t){tip.style.display='none';return;}
  tip.textContent=t.getAttribute('data-tip');tip.style.display='block';});
 tl.addEventListener('mousemove',function(e){tip.style.left=(e.clientX+12)+'px';
  tip.style.top=(e.clientY+12)+'px';});
 tl.addEventListener('mouseleave',function(){tip.style.display='none';});
})();
)";

std::string Escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f%%", v);
  return buf;
}

std::string Us(double us) {
  char buf[32];
  if (us >= 1000) {
    std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f us", us);
  }
  return buf;
}

// ArgsText: an event's args as "key=value" lines, for its tooltip.
std::string ArgsText(const Json& args) {
  std::string o;
  for (const auto& [k, v] : args.object) {
    o += "\n" + k + "=";
    if (v.kind == Json::Kind::kString) {
      o += v.str;
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.15g", v.number);
      o += buf;
    }
  }
  return o;
}

// GoroutineColor: a stable hue per goroutine id.
std::string GoroutineColor(double g) {
  int hue = static_cast<int>(static_cast<long long>(g) * 137 % 360);
  return "hsl(" + std::to_string(hue) + ",55%,45%)";
}

std::string SliceDiv(const Event& e, double total) {
  std::string cls = e.cat == "goroutine"  ? "goroutine"
                    : e.cat == "syscall"  ? "syscall"
                    : e.cat == "MPark"    ? "parked"
                    : e.cat == "spinning" ? "spinning"
                                          : "usleep";
  std::string style =
      "left:" + Pct(100 * e.ts / total) + ";width:" + Pct(100 * e.dur / total);
  std::string attrs;
  if (cls == "goroutine") {
    style += ";background:" + GoroutineColor(e.args.NumOr("g", 0));
    attrs = " data-g=\"" +
            std::to_string(static_cast<long long>(e.args.NumOr("g", 0))) + "\"";
  }
  std::string tip = e.name + " (" + e.cat + ")\nstart " + Us(e.ts) +
                    ", duration " + Us(e.dur) + ArgsText(e.args);
  return "<div class=\"slice " + cls + "\" data-cat=\"" + Escape(e.cat) + "\"" +
         attrs + " style=\"" + style + "\" data-tip=\"" + Escape(tip) + "\">" +
         (cls == "goroutine" ? Escape(e.name) : "") + "</div>";
}

std::string EventDiv(const Event& e, double total) {
  std::string tip = e.name + "\nat " + Us(e.ts) + ArgsText(e.args);
  return "<div class=\"event " + Escape(e.cat) + "\" data-cat=\"" +
         Escape(e.cat) + "\" style=\"left:" + Pct(100 * e.ts / total) +
         "\" data-tip=\"" + Escape(tip) + "\"></div>";
}

std::string Ruler(double total) {
  std::string o =
      "<div class=\"lane ruler-lane\"><div class=\"lane-label\">"
      "time</div><div class=\"lane-body ruler\">";
  for (int i = 0; i < 10; i++) {
    o += "<div class=\"tick\" style=\"left:" + Pct(i * 10.0) + "\">" +
         Us(total * i / 10) + "</div>";
  }
  return o + "</div></div>\n";
}

std::string Legend() {
  return "<div id=\"legend\"><span><i style=\"background:hsl(137,55%,45%)\">"
         "</i>goroutine running</span><span><i style=\"background:#e67e22\">"
         "</i>syscall</span><span><i style=\"background:#b0bec5\"></i>M parked"
         "</span><span><i style=\"background:#8e44ad\"></i>usleep</span>"
         "<span><i style=\"background:#f1c40f\"></i>M spinning</span>"
         "<span><i style=\"background:#2980b9\"></i>unblock</span><span>"
         "<i style=\"background:#c0392b\"></i>block</span><span><i style=\""
         "background:#d35400\"></i>retake</span><span><i style=\"background:"
         "#16a085\"></i>steal</span></div>";
}

}  // namespace

// A browser stays responsive up to a few hundred thousand elements; past
// that the page shows the first kMaxDrawn events and says so.
constexpr std::size_t kMaxDrawn = 300000;

std::string RenderHtml(const Trace& t, const std::string& title) {
  double total = t.duration_us > 0 ? t.duration_us : 1;
  std::map<std::pair<int, int>, std::string> lanes;
  for (const auto& [key, name] : t.tracks) lanes[key] = "";
  std::size_t drawn = 0;
  for (const Event& e : t.events) {
    if (e.ph != 'X' && e.ph != 'i') continue;
    if (++drawn > kMaxDrawn) continue;
    std::string& body = lanes[{e.pid, e.tid}];
    body += e.ph == 'X' ? SliceDiv(e, total) : EventDiv(e, total);
    body += "\n";
  }
  Summary s = Summarize(t);
  std::string o =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
      "<title>" +
      Escape(title) + "</title><style>" + kStyle +
      "</style></head><body>\n<header><h1>gort trace: " + Escape(title) +
      "</h1><div id=\"info\">" + Us(t.duration_us) + ", " +
      std::to_string(s.ps) + " Ps, " + std::to_string(s.ms) + " Ms, " +
      std::to_string(s.goroutines) + " goroutines, " +
      std::to_string(t.events.size()) + " events" +
      (drawn > kMaxDrawn ? " (the first " + std::to_string(kMaxDrawn) +
                               " drawn: trace a shorter run)"
                         : std::string()) +
      "</div>"
      "<div id=\"controls\"><button id=\"zoom-out\">&minus;</button>"
      "<button id=\"zoom-in\">+</button><button id=\"zoom-reset\">"
      "reset</button> zoom <span id=\"zoom-level\">1x</span></div>" +
      Legend() + "</header>\n<div id=\"timeline\">\n" + Ruler(total);
  for (const auto& [key, body] : lanes) {
    auto it = t.tracks.find(key);
    std::string name = it != t.tracks.end() ? it->second
                                            : (key.first == kPidP ? "P" : "M") +
                                                  std::to_string(key.second);
    bool isP = key.first == kPidP;
    o += "<div class=\"lane " + std::string(isP ? "p" : "m") +
         "\" data-track=\"" + Escape(name) + "\" data-kind=\"" +
         (isP ? "P" : "M") + "\"><div class=\"lane-label\" title=\"" +
         Escape(name) + "\">" + Escape(name) +
         "</div><div class=\"lane-body\">\n" + body + "</div></div>\n";
  }
  o += "</div>\n<div id=\"tooltip\"></div>\n<script>" + std::string(kScript) +
       "</script>\n</body></html>\n";
  return o;
}

}  // namespace gort::trace
