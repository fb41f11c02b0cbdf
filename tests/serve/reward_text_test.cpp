// Finding the policy's response in an OpenRLHF query: the prompt whole, the
// prompt's tail when OpenRLHF left-truncated it or it decoded differently,
// the last assistant turn of each common chat template, and nothing (the
// caller masks) rather than the whole query. End-of-turn tokens of each
// template come off the end.
#include <gtest/gtest.h>

#include <string>

#include "serve/detail/reward_text.hpp"

namespace tessera::serve::detail {
namespace {

const std::string kKernel = "```cuda\n__global__ void k() {}\n```";

// A ChatML prompt long enough to be truncated, ending in the assistant header.
std::string chatml_prompt() {
  std::string user(3000, 'u');
  for (std::size_t i = 0; i < user.size(); i += 60) user[i] = '\n';
  return "<|im_start|>system\nYou write HGEMM kernels.<|im_end|>\n<|im_start|>user\nWrite the kernel. " + user +
         " M = 512, N = 512, K = 512.<|im_end|>\n<|im_start|>assistant\n";
}

TEST(RewardText, ThePromptFoundWholeGivesWhatFollowsIt) {
  const auto prompt = chatml_prompt();
  const auto r = split_response(prompt + kKernel + "<|im_end|>", prompt);
  EXPECT_EQ(r.from, ResponseFrom::prompt);
  EXPECT_EQ(r.text, kKernel);
}

TEST(RewardText, ALeftTruncatedPromptIsFoundByItsTail) {
  const auto prompt = chatml_prompt();
  // OpenRLHF keeps the prompt's last tokens; the first kept one may decode to a partial word.
  const auto query = "\uFFFD" + prompt.substr(prompt.size() - 900) + kKernel + "<|im_end|>";
  const auto r = split_response(query, prompt);
  EXPECT_EQ(r.from, ResponseFrom::prompt_tail);
  EXPECT_EQ(r.text, kKernel);
}

TEST(RewardText, APromptDecodedDifferentlyIsFoundByItsTail) {
  auto decoded = chatml_prompt();
  const auto prompt = decoded;
  decoded[40] = ' ';  // one character differs after decoding
  const auto r = split_response(decoded + kKernel, prompt);
  EXPECT_EQ(r.from, ResponseFrom::prompt_tail);
  EXPECT_EQ(r.text, kKernel);
}

TEST(RewardText, APromptWhoseEndDiffersFallsBackToTheLastAssistantTurn) {
  // The dataset's prompt is the user's text; the query has it inside the chat template, re-decoded with
  // every 'u' changed, so no tail of the prompt is in the query; the template's header is.
  const std::string user = "Write the kernel for M = 512, N = 512, K = 512 using tensor cores, thank you";
  std::string decoded = user;
  for (auto& c : decoded)
    if (c == 'u') c = 'v';
  const auto query = "<|im_start|>user\n" + decoded + "<|im_end|>\n<|im_start|>assistant\n" + kKernel + "<|im_end|>";
  const auto r = split_response(query, user);
  EXPECT_EQ(r.from, ResponseFrom::assistant_turn);
  EXPECT_EQ(r.text, kKernel);
}

TEST(RewardText, APromptSentWithoutItsTemplateLeavesTheTemplateOut) {
  const std::string user = "Write the kernel for M = 512, N = 512, K = 512.";
  const auto query = "<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n" + kKernel + "<|im_end|>";
  const auto r = split_response(query, user);
  EXPECT_EQ(r.from, ResponseFrom::prompt);
  EXPECT_EQ(r.text, kKernel);
}

TEST(RewardText, NoPromptAndNoTurnMarkerIsNotFoundNeverTheWholeQuery) {
  const auto r = split_response("some other prompt text entirely\n" + kKernel, chatml_prompt());
  EXPECT_EQ(r.from, ResponseFrom::not_found);
  EXPECT_EQ(r.text, "");
}

TEST(RewardText, WithoutAPromptTheQueryIsTheResponse) {
  const auto r = split_response(kKernel + " <|eot_id|><|end_of_text|>\n", "");
  EXPECT_EQ(r.from, ResponseFrom::prompt);
  EXPECT_EQ(r.text, kKernel);
}

struct Template {
  const char* name;
  std::string prefix;  // the conversation up to the assistant's text
  std::string end;     // what the template writes after it
};

TEST(RewardText, EachTemplatesAssistantTurnAndEndOfTurnTokens) {
  const std::vector<Template> templates = {
      {"Llama 3",
       "<|start_header_id|>user<|end_header_id|>\n\nGo<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
       "<|eot_id|>"},
      {"Qwen", "<|im_start|>user\nGo<|im_end|>\n<|im_start|>assistant\n", "<|im_end|>\n<|endoftext|>"},
      {"Gemma", "<bos><start_of_turn>user\nGo<end_of_turn>\n<start_of_turn>model\n", "<end_of_turn>\n<eos>"},
      {"DeepSeek", "<｜begin▁of▁sentence｜><｜User｜>Go<｜Assistant｜>", "<｜end▁of▁sentence｜>"},
      {"Mistral", "<s>[INST] Go [/INST]", "</s>"},
      {"Phi-3", "<|user|>\nGo<|end|>\n<|assistant|>\n", "<|end|>\n<|endoftext|>"},
      {"Phi-4", "<|im_start|>user<|im_sep|>Go<|im_end|><|im_start|>assistant<|im_sep|>", "<|im_end|>"},
  };
  for (const auto& t : templates) {
    const auto query = t.prefix + kKernel + t.end;
    // The prompt as the dataset has it (exact), and as nothing in the query matches (the turn marker).
    EXPECT_EQ(split_response(query, t.prefix).text, kKernel) << t.name;
    const auto r = split_response(query, "a prompt that was never in this query, long enough to search");
    EXPECT_EQ(r.from, ResponseFrom::assistant_turn) << t.name;
    EXPECT_EQ(r.text, kKernel) << t.name;
  }
}

TEST(RewardText, EveryListedEndOfTurnTokenComesOff) {
  for (const auto& token : end_of_turn_tokens()) EXPECT_EQ(strip_end_of_turn(kKernel + token + "\n"), kKernel) << token;
  EXPECT_EQ(strip_end_of_turn(kKernel + "<|custom_stop|>"), kKernel) << "any one-line <|...|> token";
  EXPECT_EQ(strip_end_of_turn("a <|b\nc|>"), "a <|b\nc|>") << "not a token: spans a line";
  EXPECT_EQ(strip_end_of_turn("KERNEL</s>"), "KERNEL");
}

}  // namespace
}  // namespace tessera::serve::detail
