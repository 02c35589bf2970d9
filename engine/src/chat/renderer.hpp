// Runs a parsed template as jinja2 runs it: scopes (a for loop's body and a
// macro's have their own; if has none), the loop variable, macros, and the
// output with the spans {% generation %} wrote.
#pragma once
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ast.hpp"

namespace vkamp::chat {

class Renderer {
 public:
  Renderer(std::map<std::string, Value> globals, std::tm now);

  void run(const Body& body);
  std::string& output() { return out_; }
  const std::vector<std::pair<std::size_t, std::size_t>>& generation_spans() const { return spans_; }

  Value eval(const Expr& e);
  // Calls a function value (a macro, a global, a bound method).
  Value call(const Value& callee, Args& args, const std::string& what);
  const std::tm& now() const { return now_; }
  // obj.name and obj[key] as jinja2's environment reads them.
  Value eval_getattr(const Value& obj, const std::string& name);
  Value eval_getitem(const Value& obj, const Value& key);

 private:
  enum class Flow { Normal, Break, Continue };
  using Frame = std::unordered_map<std::string, Value>;

  Flow exec(const Body& body);
  Flow exec_for(const Node& n);
  void exec_set(const Node& n, Value value);
  Value define_macro(const Node& n);
  std::string render_to_string(const Body& body);

  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value value) { frames_.back()->insert_or_assign(name, std::move(value)); }
  void bind_targets(Frame& frame, const std::vector<std::string>& targets, const Value& item);

  Value eval_binary(const Expr& e);
  Value eval_compare(const Expr& e);
  Value eval_slice(const Expr& e);
  Args eval_args(const Expr& e, std::size_t first);

  std::map<std::string, Value> globals_;
  std::vector<std::shared_ptr<Frame>> frames_;
  std::string out_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;
  std::tm now_;
};

// Filters, tests and methods (filters.cpp, tests.cpp, methods.cpp).
Value apply_filter(Renderer& r, const std::string& name, const Value& v, Args& args);
bool apply_test(Renderer& r, const std::string& name, const Value& v, Args& args);
// obj.name as jinja2's sandbox reads it: a bound method where the type has
// one by that name, else nullptr-kind Undefined.
Value method_of(const Value& obj, const std::string& name);

}  // namespace vkamp::chat
