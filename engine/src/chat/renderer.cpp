// Statements, as jinja2's compiled code runs them.
#include "renderer.hpp"

namespace vkamp::chat {

Renderer::Renderer(std::map<std::string, Value> globals, std::tm now) : globals_(std::move(globals)), now_(now) {
  frames_.push_back(std::make_shared<Frame>());
}

void Renderer::run(const Body& body) {
  if (exec(body) != Flow::Normal) fail("{% break %} or {% continue %} outside a loop");
}

Value Renderer::lookup(const std::string& name) const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    const auto found = (*it)->find(name);
    if (found != (*it)->end()) return found->second;
  }
  const auto g = globals_.find(name);
  return g != globals_.end() ? g->second : Value::undefined(name);
}

std::string Renderer::render_to_string(const Body& body) {
  std::string saved = std::move(out_);
  out_.clear();
  const Flow flow = exec(body);
  std::string text = std::move(out_);
  out_ = std::move(saved);
  if (flow != Flow::Normal) fail("{% break %} or {% continue %} outside a loop");
  return text;
}

void Renderer::bind_targets(Frame& frame, const std::vector<std::string>& targets, const Value& item) {
  if (targets.size() == 1) {
    frame.insert_or_assign(targets[0], item);
    return;
  }
  const List parts = iterate(item);
  if (parts.size() != targets.size())
    fail("cannot unpack " + std::to_string(parts.size()) + " values into " + std::to_string(targets.size()) + " names");
  for (std::size_t k = 0; k < parts.size(); ++k) frame.insert_or_assign(targets[k], parts[k]);
}

Renderer::Flow Renderer::exec_for(const Node& n) {
  const Value iterable = eval(*n.expr);
  List items = iterate(iterable);
  if (n.condition) {  // the loop's "if": items it rejects are not counted by loop.length
    List kept;
    for (const Value& item : items) {
      frames_.push_back(std::make_shared<Frame>());
      bind_targets(*frames_.back(), n.targets, item);
      const bool keep = truthy(eval(*n.condition));
      frames_.pop_back();
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  const auto count = static_cast<int64_t>(items.size());
  for (int64_t k = 0; k < count; ++k) {
    auto frame = std::make_shared<Frame>();
    bind_targets(*frame, n.targets, items[k]);
    Dict loop{{Value::string("index"), Value::integer(k + 1)},
              {Value::string("index0"), Value::integer(k)},
              {Value::string("revindex"), Value::integer(count - k)},
              {Value::string("revindex0"), Value::integer(count - k - 1)},
              {Value::string("first"), Value::boolean(k == 0)},
              {Value::string("last"), Value::boolean(k == count - 1)},
              {Value::string("length"), Value::integer(count)},
              {Value::string("depth"), Value::integer(1)},
              {Value::string("depth0"), Value::integer(0)},
              {Value::string("previtem"), k > 0 ? items[k - 1] : Value::undefined("previtem")},
              {Value::string("nextitem"), k + 1 < count ? items[k + 1] : Value::undefined("nextitem")}};
    frame->insert_or_assign("loop", Value::make_dict(std::move(loop)));
    frames_.push_back(frame);
    const Flow flow = exec(n.body);
    frames_.pop_back();
    if (flow == Flow::Break) break;
  }
  if (count == 0) return exec(n.orelse);
  return Flow::Normal;
}

void Renderer::exec_set(const Node& n, Value value) {
  if (n.attribute_target) {
    Value ns = lookup(n.targets[0]);
    if (!(ns.is_dict() && ns.namespace_)) fail("cannot assign attribute on non-namespace object");
    for (auto& [k, v] : *ns.dict)
      if (k.is_string() && k.s == n.targets[1]) {
        v = std::move(value);
        return;
      }
    ns.dict->emplace_back(Value::string(n.targets[1]), std::move(value));
    return;
  }
  if (n.targets.size() == 1) return assign(n.targets[0], std::move(value));
  Frame unpacked;
  bind_targets(unpacked, n.targets, value);
  for (auto& [k, v] : unpacked) assign(k, v);
}

Value Renderer::define_macro(const Node& n) {
  const Node* macro = &n;
  return Value::function([this, macro](Args& args) {
    if (args.positional.size() > macro->params.size())
      fail("macro '" + macro->text + "' takes not more than " + std::to_string(macro->params.size()) + " argument(s)");
    for (const auto& kw : args.keyword) {
      bool found = false;
      for (const auto& p : macro->params) found = found || p == kw.first;
      if (!found) fail("macro '" + macro->text + "' takes no keyword argument '" + kw.first + "'");
    }
    // The body sees its arguments and the template's top level (as it is at the call).
    std::vector<std::shared_ptr<Frame>> saved = {frames_[0], std::make_shared<Frame>()};
    std::swap(saved, frames_);
    for (std::size_t k = 0; k < macro->params.size(); ++k) {
      Value v = args.get(k, macro->params[k]);
      if (v.is_undefined() && k >= args.positional.size()) {
        bool given = false;
        for (const auto& kw : args.keyword) given = given || kw.first == macro->params[k];
        if (!given)
          v = macro->defaults[k] ? eval(*macro->defaults[k]) : Value::undefined(macro->params[k]);
      }
      assign(macro->params[k], std::move(v));
    }
    std::string text;
    try {
      text = render_to_string(macro->body);
    } catch (...) {
      std::swap(saved, frames_);
      throw;
    }
    std::swap(saved, frames_);
    return Value::string(std::move(text));  // jinja2 without autoescape: a str, not Markup
  });
}

Renderer::Flow Renderer::exec(const Body& body) {
  for (const Node& n : body) {
    switch (n.type) {
      case Node::Type::Text: out_ += n.text; break;
      case Node::Type::Print: out_ += to_str(eval(*n.expr)); break;
      case Node::Type::If: {
        const Flow flow = exec(truthy(eval(*n.expr)) ? n.body : n.orelse);
        if (flow != Flow::Normal) return flow;
        break;
      }
      case Node::Type::For: exec_for(n); break;
      case Node::Type::Set: exec_set(n, eval(*n.expr)); break;
      case Node::Type::SetBlock: assign(n.targets[0], Value::string(render_to_string(n.body))); break;
      case Node::Type::Macro: assign(n.text, define_macro(n)); break;
      case Node::Type::Break: return Flow::Break;
      case Node::Type::Continue: return Flow::Continue;
      case Node::Type::Generation: {
        const std::size_t start = out_.size();
        const Flow flow = exec(n.body);
        spans_.emplace_back(start, out_.size());
        if (flow != Flow::Normal) return flow;
        break;
      }
      case Node::Type::FilterBlock: {
        // The chain's innermost filter (items[0] null) takes the body's text.
        Value text = Value::string(render_to_string(n.body));
        std::vector<const Expr*> chain;
        for (const Expr* e = n.expr.get(); e; e = e->items[0].get()) chain.push_back(e);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
          Args args = eval_args(**it, 1);
          text = apply_filter(*this, (*it)->name, text, args);
        }
        out_ += to_str(text);
        break;
      }
    }
  }
  return Flow::Normal;
}

}  // namespace vkamp::chat
