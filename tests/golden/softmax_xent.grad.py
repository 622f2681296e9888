import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def softmax_xent_grad(logits, label):
    max_logits = np.max(logits)
    shifted = logits - max_logits
    exp_shifted = np.exp(shifted)
    sum_exp_shifted = np.sum(exp_shifted)
    log_sum_exp_shifted = np.log(sum_exp_shifted)
    logp = shifted - log_sum_exp_shifted
    logp_label = logp[label]
    softmax_xent = -logp_label
    softmax_xent_bar = grad_seed(softmax_xent)
    # return -logp[label]
    logp_label_bar = -softmax_xent_bar
    logp_bar = np.zeros_like(logp)
    np.add.at(logp_bar, label, logp_label_bar)
    # logp = shifted - np.log(np.sum(np.exp(shifted)))
    log_sum_exp_shifted_bar = unbroadcast(-logp_bar, log_sum_exp_shifted)
    sum_exp_shifted_bar = log_sum_exp_shifted_bar / sum_exp_shifted
    exp_shifted_bar = np.broadcast_to(sum_exp_shifted_bar, np.shape(exp_shifted))
    shifted_bar = logp_bar + exp_shifted_bar * exp_shifted
    # shifted = logits - np.max(logits)
    max_logits_bar = unbroadcast(-shifted_bar, max_logits)
    winners = logits == max_logits
    count = np.sum(winners * np.ones_like(max_logits), axis=None, keepdims=True)
    share = max_logits_bar / count
    logits_bar = shifted_bar + np.where(winners, share, share * 0.0)
    return logits_bar
