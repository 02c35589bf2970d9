// The public face: parse once, render with transformers' variables and
// globals (raise_exception, strftime_now, namespace, range, dict).
#include "vkamp/text/chat_template.hpp"

#include <nlohmann/json.hpp>

#include "parser.hpp"
#include "python_text.hpp"
#include "renderer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::text {

using chat::Value;

namespace {

// raise_exception's error, told apart so its message is quoted as the template's own.
struct TemplateRaised : chat::RenderError {
  using RenderError::RenderError;
};

bool uses_generation(const chat::Body& body) {
  for (const auto& n : body)
    if (n.type == chat::Node::Type::Generation || uses_generation(n.body) || uses_generation(n.orelse)) return true;
  return false;
}

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_float: return Value::real(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      chat::List items;
      for (const auto& x : j) items.push_back(from_json(x));
      return Value::make_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      chat::Dict items;
      for (const auto& [k, x] : j.items()) items.emplace_back(Value::string(k), from_json(x));
      return Value::make_dict(std::move(items));
    }
    default: throw chat::RenderError("a JSON value of type " + std::string(j.type_name()) + " cannot be a template variable");
  }
}

Value range_of(chat::Args& a) {
  std::vector<int64_t> bounds;
  for (const Value& v : a.positional) {
    if (v.kind != Value::Kind::Int) chat::fail("range() takes integers, not " + chat::type_name(v));
    bounds.push_back(v.i);
  }
  if (bounds.empty() || bounds.size() > 3) chat::fail("range() takes one to three arguments");
  const int64_t start = bounds.size() > 1 ? bounds[0] : 0, stop = bounds.size() > 1 ? bounds[1] : bounds[0];
  const int64_t step = bounds.size() > 2 ? bounds[2] : 1;
  if (step == 0) chat::fail("range() arg 3 must not be zero");
  chat::List out;
  for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) out.push_back(Value::integer(k));
  return Value::make_list(std::move(out));
}

std::map<std::string, Value> make_globals(const std::tm& now) {
  std::map<std::string, Value> g;
  g["raise_exception"] = Value::function([](chat::Args& a) -> Value {
    throw TemplateRaised(chat::to_str(a.get(0, "message")));
  });
  g["strftime_now"] = Value::function([now](chat::Args& a) {
    return Value::string(chat::python_strftime(chat::to_str(a.need(0, "format", "strftime_now")), now));
  });
  g["namespace"] = Value::function([](chat::Args& a) {
    Value ns = Value::make_dict();
    ns.namespace_ = true;
    for (const Value& p : a.positional) {
      if (!p.is_dict()) chat::fail("namespace() takes a mapping or keywords");
      for (const auto& kv : *p.dict) ns.dict->push_back(kv);
    }
    for (const auto& [k, v] : a.keyword) ns.dict->emplace_back(Value::string(k), v);
    return ns;
  });
  g["dict"] = Value::function([](chat::Args& a) {
    if (!a.positional.empty()) chat::fail("dict() with positional arguments is not supported by vkamp's renderer");
    Value d = Value::make_dict();
    for (const auto& [k, v] : a.keyword) d.dict->emplace_back(Value::string(k), v);
    return d;
  });
  g["range"] = Value::function(range_of);
  return g;
}

}  // namespace

struct ChatTemplate::Impl {
  std::string name;
  chat::Body body;
  bool generation = false;
};

ChatTemplate::ChatTemplate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

ChatTemplate ChatTemplate::parse(const std::string& source, const std::string& name) {
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  try {
    impl->body = chat::parse_template(chat::lex_template(source));
  } catch (const chat::RenderError& e) {
    throw ChatTemplateError("chat template " + name + ": " + e.what());
  }
  impl->generation = uses_generation(impl->body);
  return ChatTemplate(std::move(impl));
}

const std::string& ChatTemplate::name() const { return impl_->name; }
bool ChatTemplate::has_generation_markers() const { return impl_->generation; }

namespace {

Value parse_json(std::string_view text, const std::string& what, bool list = true) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ChatTemplateError(what + " are not valid JSON: " + e.what());
  }
  if (list ? !j.is_array() : !j.is_object()) throw ChatTemplateError(what + (list ? " must be a JSON list" : " must be a JSON object"));
  try {
    return from_json(j);
  } catch (const chat::RenderError& e) {
    throw ChatTemplateError(what + ": " + e.what());
  }
}

ChatRender run(const ChatTemplate::Impl& impl, Value messages, const ChatVariables& vars) {
  const std::tm now = vars.now ? *vars.now : platform::local_time_now();
  std::map<std::string, Value> globals = make_globals(now);
  globals["messages"] = std::move(messages);
  globals["add_generation_prompt"] = Value::boolean(vars.add_generation_prompt);
  globals["tools"] = Value::none();  // transformers passes tools=None, documents=None without tools
  if (!vars.tools_json.empty()) globals["tools"] = parse_json(vars.tools_json, "the tools");
  globals["documents"] = Value::none();
  for (const auto& [k, v] : vars.special_tokens) globals[k] = Value::string(v);
  if (!vars.more_json.empty()) {
    const Value more = parse_json(vars.more_json, "the template's variables", false);
    for (const auto& [k, v] : *more.dict) globals[k.s] = v;
  }
  chat::Renderer renderer(std::move(globals), now);
  try {
    renderer.run(impl.body);
  } catch (const TemplateRaised& e) {
    throw ChatTemplateError("chat template " + impl.name + " refuses the conversation: \"" + e.what() + "\"");
  } catch (const chat::RenderError& e) {
    throw ChatTemplateError("chat template " + impl.name + " failed on the conversation: " + e.what());
  }
  return ChatRender{std::move(renderer.output()), renderer.generation_spans()};
}

}  // namespace

ChatRender ChatTemplate::render(const std::vector<ChatMessage>& messages, const ChatVariables& vars) const {
  chat::List list;
  for (const auto& m : messages)
    list.push_back(Value::make_dict({{Value::string("role"), Value::string(m.role)}, {Value::string("content"), Value::string(m.content)}}));
  return run(*impl_, Value::make_list(std::move(list)), vars);
}

ChatRender ChatTemplate::render_json(std::string_view messages_json, const ChatVariables& vars) const {
  return run(*impl_, parse_json(messages_json, "the messages"), vars);
}

}  // namespace vkamp::text
